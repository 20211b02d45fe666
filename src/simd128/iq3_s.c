/* IQ3_S SIMD128 kernels (the dots with Q8_K and f32 and the Q8_K matvec: iqdot.h, from the
 * values the decoder forms). Dequantize, bit-exact with ref/iq3_s.c: per sub-block, eight 4-byte
 * grid points (9-bit indices: qs plus a bit of qh) loaded as two vectors, the four sign bytes as
 * byte masks, and the values (magnitude times sign, as i8) multiplied by db * 2^-24 (iq.h). */
#include "iqdot.h"

enum {
  XS = sizeof(block_iq3_s),
  XD = offsetof(block_iq3_s, d),
  XQS = offsetof(block_iq3_s, qs),
  XQH = offsetof(block_iq3_s, qh),
  XSG = offsetof(block_iq3_s, signs),
  XSC = offsetof(block_iq3_s, scales)
};

/* Grid points k..k+3 of a sub-block (qs at q, high bits h) as 16 bytes. */
static inline v128_t points4(const uint8_t *q, unsigned h, int k) {
  const uint32_t *g = bq_iq3s_grid;
  v128_t v = wasm_v128_load32_zero(g + (q[k] | (h >> k & 1) << 8));
  v = wasm_v128_load32_lane(g + (q[k + 1] | (h >> (k + 1) & 1) << 8), v, 1);
  v = wasm_v128_load32_lane(g + (q[k + 2] | (h >> (k + 2) & 1) << 8), v, 2);
  return wasm_v128_load32_lane(g + (q[k + 3] | (h >> (k + 3) & 1) << 8), v, 3);
}

BQ_DEQUANTIZE_PROTO(iq3_s, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / QK_K; i++, p += XS) {
    const float d = bq_h2f_fast(bq_rd16(p + XD));
    /* Not unrolled: each pass stores its 128 bytes in order (see kq45.h). */
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, y += 32) {
      const int s = p[XSC + ib / 2] >> 4 * (ib % 2) & 0xF;
      /* The reference's d * (float)(1 + 2s), then exactly times 2^-24. */
      const v128_t d24 = bq_iq_slot_splat(d * (float)(1 + 2 * s) * 0x1p-24f);
      const uint8_t *q = p + XQS + 8 * ib;
      const unsigned h = p[XQH + ib];
      bq_iq_grid_store(points4(q, h, 0), points4(q, h, 4), wasm_v128_load32_splat(p + XSG + 4 * ib),
                       d24, y);
    }
  }
  return BQ_OK;
}

/* Sub-block ib's signed values and weight 1 + 2s (both halves), as the decoder forms them. */
static inline void sub(const uint8_t *b, int ib, v128_t v[2], int32_t ls[2]) {
  const uint8_t *q = b + XQS + 8 * ib;
  const unsigned h = b[XQH + ib];
  v128_t m0, m1;
  bq_iq_sign_masks(wasm_v128_load32_splat(b + XSG + 4 * ib), &m0, &m1);
  v[0] = bq_iq_signed(points4(q, h, 0), m0);
  v[1] = bq_iq_signed(points4(q, h, 4), m1);
  ls[0] = ls[1] = 1 + 2 * (b[XSC + ib / 2] >> 4 * (ib % 2) & 0xF);
}

static_assert(XD == 0, "d first (iqdot.h)");
BQ_IQG_KERNELS(iq3_s, 1.0f)
