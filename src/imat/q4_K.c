/* Q4_K with importance weights: ggml's quantize_q4_K (quantize_row_q4_K_impl per row); see
 * q45_K.h for the fits. Then the codes again against the stored scales. */
#include "q45_K.h"

void bq_q4_K_imat_block__ref(const float *x, const float *qw, void *out) {
  block_q4_K b;
  uint8_t L[QK_K];
  bq_q45_K_imat_fit(x, qw, 15, 0, L, b.scales, &b.d, &b.dmin);
  bq_q45_K_requantize(x, 15, b.scales, b.d, b.dmin, L);
  bq_q45_K_pack_4bit(L, b.qs);
  memcpy(out, &b, sizeof b);
}

BQ_QUANTIZE_ROWS_PROTO(q4_K, __ref) {
  BQ_IMAT_ROWS(QK_K, bq_q4_K_quantize__ref,
               bq_imat_rows256(x, y, rows, cols, qw, sizeof(block_q4_K), bq_q4_K_imat_block__ref));
}
