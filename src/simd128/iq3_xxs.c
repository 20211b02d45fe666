/* IQ3_XXS SIMD128 kernels (the dots with Q8_K and f32 and the Q8_K matvec: iqdot.h, from the
 * values the decoder forms). Dequantize, bit-exact with ref/iq3_xxs.c: per sub-block, eight 4-byte
 * grid points loaded as two vectors, the signs from ksigns_iq2xs as byte masks, and the values
 * (magnitude times sign, as i8) multiplied by db * 2^-24 (iq.h). */
#include "iqdot.h"

enum {
  XS = sizeof(block_iq3_xxs),
  XD = offsetof(block_iq3_xxs, d),
  XQS = offsetof(block_iq3_xxs, qs),
  XSAS = offsetof(block_iq3_xxs, sas)
};

/* Grid points q[0..3] as 16 bytes. */
static inline v128_t points4(const uint8_t *q) {
  const uint32_t *g = bq_iq3xxs_grid;
  v128_t v = wasm_v128_load32_zero(g + q[0]);
  v = wasm_v128_load32_lane(g + q[1], v, 1);
  v = wasm_v128_load32_lane(g + q[2], v, 2);
  return wasm_v128_load32_lane(g + q[3], v, 3);
}

BQ_DEQUANTIZE_PROTO(iq3_xxs, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / QK_K; i++, p += XS) {
    const float d = bq_h2f_fast(bq_rd16(p + XD));
    /* Not unrolled: each pass stores its 128 bytes in order (see kq45.h). */
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, y += 32) {
      const uint32_t w = bq_rd32(p + XSAS + 4 * ib);
      /* The reference's (d * (0.5f + s)) * 0.5f, then exactly times 2^-24. */
      const v128_t d24 = bq_iq_slot_splat(d * (0.5f + (float)(w >> 28)) * 0.5f * 0x1p-24f);
      const uint8_t *q = p + XQS + 8 * ib;
      bq_iq_grid_store(points4(q), points4(q + 4), wasm_i32x4_splat((int32_t)bq_iq_ksigns4(w)), d24,
                       y);
    }
  }
  return BQ_OK;
}

/* Sub-block ib's signed values and weight 2s + 1 (both halves), as the decoder forms them. */
static inline void sub(const uint8_t *b, int ib, v128_t v[2], int32_t ls[2]) {
  const uint32_t w = bq_rd32(b + XSAS + 4 * ib);
  const uint8_t *q = b + XQS + 8 * ib;
  v128_t m0, m1;
  bq_iq_sign_masks(wasm_i32x4_splat((int32_t)bq_iq_ksigns4(w)), &m0, &m1);
  v[0] = bq_iq_signed(points4(q), m0);
  v[1] = bq_iq_signed(points4(q + 4), m1);
  ls[0] = ls[1] = (int32_t)(2 * (w >> 28) + 1);
}

static_assert(XD == 0, "d first (iqdot.h)");
BQ_IQG_KERNELS(iq3_xxs, 0.25f)
