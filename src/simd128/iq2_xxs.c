/* IQ2_XXS SIMD128 kernels: dequantize, bit-exact with ref/iq2_xxs.c: per sub-block, the four
 * 8-byte grid rows loaded as two vectors, the signs from ksigns_iq2xs as byte masks, and the values
 * (magnitude times sign, as i8) multiplied by db * 2^-24 (iq.h); the dots with Q8_K (equal to the
 * reference's) and f32, and the Q8_K matvec, from the same values (iqdot.h). */
#include "iqdot.h"

enum {
  XS = sizeof(block_iq2_xxs),
  XD = offsetof(block_iq2_xxs, d),
  XQS = offsetof(block_iq2_xxs, qs)
};

BQ_DEQUANTIZE_PROTO(iq2_xxs, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / QK_K; i++, p += XS) {
    const float d = bq_h2f_fast(bq_rd16(p + XD));
    /* Not unrolled: each pass stores its 128 bytes in order (see kq45.h). */
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, y += 32) {
      const uint8_t *a = p + XQS + 8 * ib;
      const uint32_t w = bq_rd32(a + 4);
      /* The reference's (d * (0.5f + s)) * 0.25f, then exactly times 2^-24. */
      const v128_t d24 = bq_iq_slot_splat(d * (0.5f + (float)(w >> 28)) * 0.25f * 0x1p-24f);
      const uint64_t *g = bq_iq2xxs_grid;
      const v128_t g0 = wasm_v128_load64_lane(g + a[1], wasm_v128_load64_zero(g + a[0]), 1);
      const v128_t g1 = wasm_v128_load64_lane(g + a[3], wasm_v128_load64_zero(g + a[2]), 1);
      bq_iq_grid_store(g0, g1, wasm_i32x4_splat((int32_t)bq_iq_ksigns4(w)), d24, y);
    }
  }
  return BQ_OK;
}

/* Sub-block ib's signed values and weight 2s + 1 (both halves), as the decoder forms them. */
static inline void sub(const uint8_t *b, int ib, v128_t v[2], int32_t ls[2]) {
  const uint8_t *a = b + XQS + 8 * ib;
  const uint32_t w = bq_rd32(a + 4);
  v128_t g0, g1, m0, m1;
  bq_iq_grid_rows(bq_iq2xxs_grid, a[0], a[1], a[2], a[3], &g0, &g1);
  bq_iq_sign_masks(wasm_i32x4_splat((int32_t)bq_iq_ksigns4(w)), &m0, &m1);
  v[0] = bq_iq_signed(g0, m0);
  v[1] = bq_iq_signed(g1, m1);
  ls[0] = ls[1] = (int32_t)(2 * (w >> 28) + 1);
}

static_assert(XD == 0, "d first (iqdot.h)");
BQ_IQG_KERNELS(iq2_xxs, 0.125f)
