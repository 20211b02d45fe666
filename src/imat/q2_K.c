/* Q2_K with importance weights: ggml's quantize_q2_K (quantize_row_q2_K_impl per row). Per
 * super-block: sigma2 its mean x^2; each 16-element sub-block an affine fit (make_qkx3_quants:
 * nmax 3, 37 trial scales) weighted by qw * sqrt(sigma2 + x^2); the 16 scales and the 16 mins
 * each quantized to 4 bits by make_qp_quants, weighted by the sub-blocks' total weights; then the
 * codes again against the stored scales. */
#include "imat.h"

void bq_q2_K_imat_scales(const float *scales, const float *mins, const float *sw, block_q2_K *b) {
  uint8_t Ls[16], Lm[16];
  b->d = bq_fp32_to_fp16(bq_make_qp_quants(16, 15, scales, Ls, sw));
  b->dmin = bq_fp32_to_fp16(bq_make_qp_quants(16, 15, mins, Lm, sw));
  for (int j = 0; j < 16; j++) b->scales[j] = (uint8_t)(Ls[j] | Lm[j] << 4);
}

void bq_q2_K_imat_block__ref(const float *x, const float *qw, void *out) {
  uint8_t L[QK_K], Laux[16];
  float w[16], sw[16], scales[16], mins[16];
  const float sigma2 = bq_div(bq_imat_sum_x2(x, QK_K), QK_K);
  for (int j = 0; j < 16; j++) {
    bq_imat_weights(qw + 16 * j, x + 16 * j, 16, sigma2, w);
    sw[j] = bq_imat_sum(w, 16);
    scales[j] = bq_make_qkx2_quants(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], Laux, BQ_IMAT_RMIN,
                                    BQ_IMAT_RDELTA, BQ_IMAT_NSTEP, 0);
  }
  block_q2_K b;
  bq_q2_K_imat_scales(scales, mins, sw, &b);
  bq_q2_K_requantize(x, &b, L);
  bq_kq_pack_2bit(L, b.qs);
  memcpy(out, &b, sizeof b);
}

BQ_QUANTIZE_ROWS_PROTO(q2_K, __ref) {
  BQ_IMAT_ROWS(QK_K, bq_q2_K_quantize__ref,
               bq_imat_rows256(x, y, rows, cols, qw, sizeof(block_q2_K), bq_q2_K_imat_block__ref));
}
