/* Q5_0 with importance weights: ggml's quantize_q5_0 (quantize_row_q5_0_impl per row). Each block
 * is a make_qx_quants fit (nmax 16, 19 trial scales) weighted by qw * sqrt(sigma2 + x^2), sigma2
 * the row's mean x^2; no re-quantization. */
#include "imat.h"

void bq_q5_0_imat_block__ref(const float *x, const float *qw, float sigma2, void *out) {
  float w[32];
  int8_t L[32];
  bq_imat_weights(qw, x, 32, sigma2, w);
  block_q5_0 b;
  b.d = bq_fp32_to_fp16(bq_make_qx_quants(32, 16, x, w, L));
  uint32_t qh = 0;
  for (int j = 0; j < 16; j++) {
    b.qs[j] = (uint8_t)((L[j] & 0xF) | (L[j + 16] & 0xF) << 4);
    qh |= (uint32_t)(L[j] >> 4 & 1) << j | (uint32_t)(L[j + 16] >> 4 & 1) << (j + 16);
  }
  memcpy(b.qh, &qh, 4);
  memcpy(out, &b, sizeof b);
}

BQ_QUANTIZE_ROWS_PROTO(q5_0, __ref) {
  BQ_IMAT_ROWS(32, bq_q5_0_quantize__ref,
               bq_imat_rows32(x, y, rows, cols, qw, sizeof(block_q5_0), bq_q5_0_imat_block__ref));
}
