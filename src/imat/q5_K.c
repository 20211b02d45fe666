/* Q5_K with importance weights: ggml's quantize_q5_K (quantize_row_q5_K_impl per row); see
 * q45_K.h for the fits. Then the codes again against the stored scales. */
#include "q45_K.h"

void bq_q5_K_imat_block__ref(const float *x, const float *qw, void *out) {
  block_q5_K b;
  uint8_t L[QK_K];
  bq_q45_K_imat_fit(x, qw, 31, 1, L, b.scales, &b.d, &b.dmin);
  bq_q45_K_requantize(x, 31, b.scales, b.d, b.dmin, L);
  bq_q5_K_pack_codes(L, &b);
  memcpy(out, &b, sizeof b);
}

BQ_QUANTIZE_ROWS_PROTO(q5_K, __ref) {
  BQ_IMAT_ROWS(QK_K, bq_q5_K_quantize__ref,
               bq_imat_rows256(x, y, rows, cols, qw, sizeof(block_q5_K), bq_q5_K_imat_block__ref));
}
