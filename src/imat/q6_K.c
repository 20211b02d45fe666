/* Q6_K with importance weights: ggml's quantize_q6_K (quantize_row_q6_K_impl per row), which is
 * its reference quantizer with each 16-element fit (make_qx_quants) weighted by qw itself rather
 * than x^2 (src/ref/q6_K.c). */
#include "imat.h"

void bq_q6_K_imat_block__ref(const float *x, const float *qw, void *out) {
  block_q6_K b;
  bq_q6_K_quantize_block(x, qw, &b);
  memcpy(out, &b, sizeof b);
}

BQ_QUANTIZE_ROWS_PROTO(q6_K, __ref) {
  BQ_IMAT_ROWS(QK_K, bq_q6_K_quantize__ref,
               bq_imat_rows256(x, y, rows, cols, qw, sizeof(block_q6_K), bq_q6_K_imat_block__ref));
}
