/* Q3_K with importance weights: ggml's quantize_q3_K (quantize_row_q3_K_impl per row). Per
 * super-block: sigma2 twice its mean x^2; each 16-element sub-block a symmetric fit
 * (make_qx_quants: nmax 4, 19 trial scales) weighted by qw * sqrt(sigma2 + x^2); the 16 scales
 * quantized to 6 bits by another make_qx_quants (nmax 32), weighted by the sub-blocks' total
 * weights; then the codes again against the stored scales. */
#include "imat.h"

void bq_q3_K_imat_scales(const float *scales, const float *sw, block_q3_K *b) {
  int8_t Ls[16];
  memset(b->scales, 0, sizeof b->scales);
  const float d = bq_make_qx_quants(16, 32, scales, sw, Ls);
  for (int j = 0; j < 16; j++) bq_q3_K_pack_scale(j, Ls[j], b->scales);
  b->d = bq_fp32_to_fp16(d);
}

void bq_q3_K_imat_block__ref(const float *x, const float *qw, void *out) {
  int8_t L[QK_K];
  float w[16], sw[16], scales[16];
  const float sigma2 = bq_div(bq_mul(2, bq_imat_sum_x2(x, QK_K)), QK_K);
  for (int j = 0; j < 16; j++) {
    bq_imat_weights(qw + 16 * j, x + 16 * j, 16, sigma2, w);
    sw[j] = bq_imat_sum(w, 16);
    scales[j] = bq_make_qx_quants(16, 4, x + 16 * j, w, L + 16 * j);
  }
  block_q3_K b;
  bq_q3_K_imat_scales(scales, sw, &b);
  bq_q3_K_finish(x, L, &b);
  memcpy(out, &b, sizeof b);
}

BQ_QUANTIZE_ROWS_PROTO(q3_K, __ref) {
  BQ_IMAT_ROWS(QK_K, bq_q3_K_quantize__ref,
               bq_imat_rows256(x, y, rows, cols, qw, sizeof(block_q3_K), bq_q3_K_imat_block__ref));
}
