/* IQ2_S SIMD128 kernels (the dots with Q8_K and f32 and the Q8_K matvec: iqdot.h, from the
 * values the decoder forms). Dequantize, bit-exact with ref/iq2_s.c: per sub-block, four 8-byte
 * grid rows (index qs | 2 bits of qh) loaded as two vectors, the four sign bytes as they are
 * stored, and a scale (d * (0.5f + s)) * 0.25f per half sub-block, times 2^-24 (iq.h). */
#include "iqdot.h"

enum {
  XS = sizeof(block_iq2_s),
  XD = offsetof(block_iq2_s, d),
  XQS = offsetof(block_iq2_s, qs),
  XSG = offsetof(block_iq2_s, signs),
  XQH = offsetof(block_iq2_s, qh),
  XSC = offsetof(block_iq2_s, scales)
};

BQ_DEQUANTIZE_PROTO(iq2_s, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / QK_K; i++, p += XS) {
    const float d = bq_h2f_fast(bq_rd16(p + XD));
    /* Not unrolled: each pass stores its 128 bytes in order (see kq45.h). */
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, y += 32) {
      const uint8_t *a = p + XQS + 4 * ib;
      const uint32_t h = p[XQH + ib], sc = p[XSC + ib];
      v128_t d0, d1, g0, g1;
      /* The reference's (d * (0.5f + s)) * 0.25f of each half, then exactly times 2^-24. */
      bq_iq_slot_splat2(d * (0.5f + (float)(sc & 15)) * 0.25f * 0x1p-24f,
                        d * (0.5f + (float)(sc >> 4)) * 0.25f * 0x1p-24f, &d0, &d1);
      bq_iq_grid_rows(bq_iq2s_grid, a[0] | (h & 3) << 8, a[1] | (h >> 2 & 3) << 8,
                      a[2] | (h >> 4 & 3) << 8, a[3] | (h >> 6) << 8, &g0, &g1);
      bq_iq_grid_store2(g0, g1, wasm_v128_load32_splat(p + XSG + 4 * ib), d0, d1, y);
    }
  }
  return BQ_OK;
}

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
