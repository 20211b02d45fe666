/* Q4_1 with importance weights: ggml's quantize_q4_1 (quantize_row_q4_1_impl per row). Each block
 * is an affine fit (make_qkx3_quants: nmax 15, 37 trial scales) weighted by
 * qw * sqrt(sigma2 + x^2), sigma2 the row's mean x^2; d is its scale, m its min. */
#include "imat.h"

void bq_q4_1_imat_block__ref(const float *x, const float *qw, float sigma2, void *out) {
  float w[32], min;
  uint8_t L[32], Laux[32];
  bq_imat_weights(qw, x, 32, sigma2, w);
  block_q4_1 b;
  const float d = bq_make_qkx2_quants(32, 15, x, w, L, &min, Laux, BQ_IMAT_RMIN, BQ_IMAT_RDELTA,
                                      BQ_IMAT_NSTEP, 0);
  b.d = bq_fp32_to_fp16(d);
  b.m = bq_fp32_to_fp16(-min);
  for (int j = 0; j < 16; j++) b.qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
  memcpy(out, &b, sizeof b);
}

BQ_QUANTIZE_ROWS_PROTO(q4_1, __ref) {
  BQ_IMAT_ROWS(32, bq_q4_1_quantize__ref,
               bq_imat_rows32(x, y, rows, cols, qw, sizeof(block_q4_1), bq_q4_1_imat_block__ref));
}
