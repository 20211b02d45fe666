/* IQ3_XXS SIMD128 dequantize, bit-exact with ref/iq3_xxs.c: per sub-block, eight 4-byte grid
 * points loaded as two vectors, the signs from ksigns_iq2xs as byte masks, and the values
 * (magnitude times sign, as i8) multiplied by db * 2^-24 (iq.h). */
#include "iq.h"

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
