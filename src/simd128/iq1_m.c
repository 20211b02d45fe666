/* IQ1_M SIMD128 dequantize, bit-exact with ref/iq1_m.c: the fp16 d gathered from the top nibbles
 * of the four u16 scales; per sub-block, four 8-byte grid rows (index qs | 3 bits of the group's qh
 * nibble) of values -1, 0, 1, plus a delta of +-1/8 per group (bit 3 of its nibble), times
 * dl = d * (2s + 1) per half sub-block (iq.h, bq_iq1_store). */
#include "iq.h"

enum {
  XS = sizeof(block_iq1_m),
  XQS = offsetof(block_iq1_m, qs),
  XQH = offsetof(block_iq1_m, qh),
  XSC = offsetof(block_iq1_m, scales)
};

/* The delta bytes (+-1) of the 32 elements of a sub-block whose four qh nibbles are the u16 h
 * (splat in hv): group g's sign is bit 3 of its nibble, bits 3, 7 of byte 0 and 3, 7 of byte 1.
 * Elements 0..15 in *e0, 16..31 in *e1: each byte masked to its group's bit, compared, or-ed with
 * 1 (-1 | 1 is -1). */
static inline void deltas(v128_t hv, v128_t *e0, v128_t *e1) {
  const v128_t bit =
      wasm_i8x16_const(8, 8, 8, 8, 8, 8, 8, 8, -128, -128, -128, -128, -128, -128, -128, -128);
  const v128_t one = wasm_i8x16_splat(1);
  const v128_t b0 = wasm_i8x16_swizzle(hv, wasm_i8x16_splat(0)),
               b1 = wasm_i8x16_swizzle(hv, wasm_i8x16_splat(1));
  *e0 = wasm_v128_or(wasm_i8x16_eq(wasm_v128_and(b0, bit), bit), one);
  *e1 = wasm_v128_or(wasm_i8x16_eq(wasm_v128_and(b1, bit), bit), one);
}

BQ_DEQUANTIZE_PROTO(iq1_m, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / QK_K; i++, p += XS) {
    const uint32_t s0 = bq_rd16(p + XSC), s1 = bq_rd16(p + XSC + 2), s2 = bq_rd16(p + XSC + 4),
                   s3 = bq_rd16(p + XSC + 6);
    const float d =
        bq_h2f_fast((uint16_t)(s0 >> 12 | (s1 >> 8 & 0x00F0) | (s2 >> 4 & 0x0F00) | (s3 & 0xF000)));
    /* Not unrolled: each pass stores its 128 bytes in order (see kq45.h). */
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, y += 32) {
      const uint8_t *a = p + XQS + 4 * ib;
      const uint32_t h = bq_rd16(p + XQH + 2 * ib); /* the four groups' nibbles */
      const uint32_t sc = bq_rd16(p + XSC + 2 * (ib / 2)) >> 6 * (ib % 2);
      v128_t d0, d1, g0, g1;
      /* The reference's dl = d * (2s + 1) of each half, exactly times 2^-27. */
      bq_iq_slot_splat2(d * (float)(2 * (sc & 7) + 1) * 0x1p-27f,
                        d * (float)(2 * (sc >> 3 & 7) + 1) * 0x1p-27f, &d0, &d1);
      bq_iq_grid_rows(bq_iq1s_grid, a[0] | (h & 7) << 8, a[1] | (h >> 4 & 7) << 8,
                      a[2] | (h >> 8 & 7) << 8, a[3] | (h >> 12 & 7) << 8, &g0, &g1);
      v128_t e0, e1;
      deltas(wasm_i32x4_splat((int32_t)h), &e0, &e1);
      bq_iq1_store(g0, g1, e0, e1, d0, d1, y);
    }
  }
  return BQ_OK;
}
