/* IQ2_S SIMD128 kernels (the dots with Q8_K and f32 and the Q8_K matvec: iqdot.h, from the
 * values the decoder forms). Dequantize, bit-exact with ref/iq2_s.c: per sub-block, four 8-byte
 * grid rows (index qs | 2 bits of qh) loaded as two vectors, the four sign bytes as they are
 * stored, and a scale (d * (0.5f + s)) * 0.25f per half sub-block, times 2^-24, formed as
 * d * (2s + 1) * 2^-27: the same float (iq.h, iqdot.h). */
#include "iqdot.h"

enum {
  XS = sizeof(block_iq2_s),
  XD = offsetof(block_iq2_s, d),
  XQS = offsetof(block_iq2_s, qs),
  XSG = offsetof(block_iq2_s, signs),
  XQH = offsetof(block_iq2_s, qh),
  XSC = offsetof(block_iq2_s, scales)
};

/* Sub-block ib's signed values and the weights 2s + 1 of its halves, as the decoder forms them. */
static inline void sub(const uint8_t *b, int ib, v128_t v[2], int32_t ls[2]) {
  const uint8_t *a = b + XQS + 4 * ib;
  const uint32_t h = b[XQH + ib], sc = b[XSC + ib];
  v128_t g0, g1, m0, m1;
  bq_iq_grid_rows(bq_iq2s_grid, a[0] | (h & 3) << 8, a[1] | (h >> 2 & 3) << 8,
                  a[2] | (h >> 4 & 3) << 8, a[3] | (h >> 6) << 8, &g0, &g1);
  bq_iq_sign_masks(wasm_v128_load32_splat(b + XSG + 4 * ib), &m0, &m1);
  v[0] = bq_iq_signed(g0, m0);
  v[1] = bq_iq_signed(g1, m1);
  ls[0] = (int32_t)(2 * (sc & 15) + 1);
  ls[1] = (int32_t)(2 * (sc >> 4) + 1);
}

static_assert(XD == 0, "d first (iqdot.h)");
BQ_IQG_KERNELS(iq2_s, 0.125f)

BQ_DEQUANTIZE_PROTO(iq2_s, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  iqg_dequantize(x, y, n / QK_K, XS, 0.125f * 0x1p-24f, sub);
  return BQ_OK;
}
