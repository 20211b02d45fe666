/* IQ2_XS SIMD128 kernels (the dots with Q8_K and f32 and the Q8_K matvec: iqdot.h, from the
 * values the decoder forms). Dequantize, bit-exact with ref/iq2_xs.c: per sub-block, the four u16
 * groups give four 8-byte grid rows (index bits 0..8) loaded as two vectors and four ksigns_iq2xs
 * sign bytes (bits 9..15); each half sub-block has its own scale (d * (0.5f + s)) * 0.25f, times
 * 2^-24, formed as d * (2s + 1) * 2^-27: the same float (iq.h, iqdot.h). */
#include "iqdot.h"

enum {
  XS = sizeof(block_iq2_xs),
  XD = offsetof(block_iq2_xs, d),
  XQS = offsetof(block_iq2_xs, qs),
  XSC = offsetof(block_iq2_xs, scales)
};

/* Sub-block ib's signed values and the weights 2s + 1 of its halves, as the decoder forms them. */
static inline void sub(const uint8_t *b, int ib, v128_t v[2], int32_t ls[2]) {
  const uint8_t *a = b + XQS + 8 * ib;
  const uint8_t *ks = bq_ksigns_iq2xs;
  const uint32_t v0 = bq_rd16(a), v1 = bq_rd16(a + 2), v2 = bq_rd16(a + 4), v3 = bq_rd16(a + 6);
  const uint32_t sc = b[XSC + ib];
  v128_t g0, g1, m0, m1;
  bq_iq_grid_rows(bq_iq2xs_grid, v0 & 511, v1 & 511, v2 & 511, v3 & 511, &g0, &g1);
  const uint32_t s = (uint32_t)ks[v0 >> 9] | (uint32_t)ks[v1 >> 9] << 8 |
                     (uint32_t)ks[v2 >> 9] << 16 | (uint32_t)ks[v3 >> 9] << 24;
  bq_iq_sign_masks(wasm_i32x4_splat((int32_t)s), &m0, &m1);
  v[0] = bq_iq_signed(g0, m0);
  v[1] = bq_iq_signed(g1, m1);
  ls[0] = (int32_t)(2 * (sc & 15) + 1);
  ls[1] = (int32_t)(2 * (sc >> 4) + 1);
}

static_assert(XD == 0, "d first (iqdot.h)");
BQ_IQG_KERNELS(iq2_xs, 0.125f)

BQ_DEQUANTIZE_PROTO(iq2_xs, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  iqg_dequantize(x, y, n / QK_K, XS, 0.125f * 0x1p-24f, sub);
  return BQ_OK;
}
