/* What the weighted Q4_K and Q5_K quantizers share (src/imat/q4_K.c, q5_K.c): the fits of one
 * super-block up to the stored scales. */
#ifndef BQ_IMAT_Q45_K_H
#define BQ_IMAT_Q45_K_H

#include "imat.h"

/* ggml's quantize_row_q4_K_impl / q5_K_impl up to the re-quantization: sigma2 twice the
 * super-block's mean x^2; each 32-element sub-block an affine fit (make_qkx3_quants, 37 trial
 * scales) weighted by qw * sqrt(sigma2 + x^2); then the scale step above. L gets the fits'
 * codes. */
/* The scale step: the 8 scales sc and mins of the fits as 6-bit codes by make_qp_quants (nmax
 * 63, weighted by the sub-blocks' total weights sw), packed into scales[12] (Q4_K stores the codes
 * as they come, Q5_K takes min(63, .) first: clamp63), and d, dmin, the two scales. */
static inline void bq_q45_K_imat_scales(const float *sc, const float *mins, const float *sw,
                                        int clamp63, uint8_t *scales, uint16_t *d, uint16_t *dmin) {
  uint8_t Ls[8], Lm[8];
  const float d_block = bq_make_qp_quants(8, 63, sc, Ls, sw);
  const float m_block = bq_make_qp_quants(8, 63, mins, Lm, sw);
  for (int j = 0; j < 8; j++) {
    const uint8_t ls = clamp63 && Ls[j] > 63 ? 63 : Ls[j];
    const uint8_t lm = clamp63 && Lm[j] > 63 ? 63 : Lm[j];
    bq_q45_K_pack_scale(j, ls, lm, scales);
  }
  *d = bq_fp32_to_fp16(d_block);
  *dmin = bq_fp32_to_fp16(m_block);
}

static inline void bq_q45_K_imat_fit(const float *x, const float *qw, int nmax, int clamp63,
                                     uint8_t *L, uint8_t *scales, uint16_t *d, uint16_t *dmin) {
  uint8_t Laux[32];
  float w[32], sw[8], sc[8], mins[8];
  const float sigma2 = bq_div(bq_mul(2, bq_imat_sum_x2(x, QK_K)), QK_K);
  for (int j = 0; j < 8; j++) {
    bq_imat_weights(qw + 32 * j, x + 32 * j, 32, sigma2, w);
    sw[j] = bq_imat_sum(w, 32);
    sc[j] = bq_make_qkx2_quants(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], Laux, BQ_IMAT_RMIN,
                                BQ_IMAT_RDELTA, BQ_IMAT_NSTEP, 0);
  }
  bq_q45_K_imat_scales(sc, mins, sw, clamp63, scales, d, dmin);
}

#endif
