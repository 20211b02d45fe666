/* IQ1_M SIMD128 kernels. The dot with Q8_K: ggml's two exact integer sums per super-block, of
 * (2s + 1) * grid . q8 and of (2s + 1) * (+-1) . q8 per half sub-block (the delta's sign of each
 * group as bytes, against the codes prepared in pair order, iqdot.h), then its float term, added
 * to acc[0] in order: the reference's result, to the bit. Dequantize, bit-exact with ref/iq1_m.c:
 * the fp16 d gathered from the top nibbles of the four u16 scales; per sub-block, four 8-byte grid
 * rows (index qs | 3 bits of the group's qh nibble) of values -1, 0, 1, plus a delta of +-1/8 per
 * group (bit 3 of its nibble), times dl = d * (2s + 1) per half sub-block (iq.h, bq_iq1_store). */
#include "iqdot.h"

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

static inline float scale_d(const uint8_t *p) {
  const uint32_t s0 = bq_rd16(p + XSC), s1 = bq_rd16(p + XSC + 2), s2 = bq_rd16(p + XSC + 4),
                 s3 = bq_rd16(p + XSC + 6);
  return bq_h2f_fast(
      (uint16_t)(s0 >> 12 | (s1 >> 8 & 0x00F0) | (s2 >> 4 & 0x0F00) | (s3 & 0xF000)));
}

/* Sub-block ib's grid rows, delta bytes and the weights 2s + 1 of its halves. */
static inline void sub(const uint8_t *p, int ib, v128_t g[2], v128_t e[2], int32_t ls[2]) {
  const uint8_t *a = p + XQS + 4 * ib;
  const uint32_t h = bq_rd16(p + XQH + 2 * ib);
  const uint32_t sc = bq_rd16(p + XSC + 2 * (ib / 2)) >> 6 * (ib % 2);
  bq_iq_grid_rows(bq_iq1s_grid, a[0] | (h & 7) << 8, a[1] | (h >> 4 & 7) << 8,
                  a[2] | (h >> 8 & 7) << 8, a[3] | (h >> 12 & 7) << 8, &g[0], &g[1]);
  deltas(wasm_i32x4_splat((int32_t)h), &e[0], &e[1]);
  ls[0] = (int32_t)(2 * (sc & 7) + 1);
  ls[1] = (int32_t)(2 * (sc >> 3 & 7) + 1);
}

/* The reference's term D * yd * ((float)sumi1 + 0.125f * (float)sumi2), in every lane. */
static inline v128_t term(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  (void)k;
  v128_t acc1 = wasm_i32x4_splat(0), acc2 = wasm_i32x4_splat(0);
  for (int ib = 0; ib < 8; ib++) {
    v128_t g[2], e[2];
    int32_t ls[2];
    sub(b, ib, g, e, ls);
    for (int h = 0; h < 2; h++) {
      const int16_t *q = a->q + 32 * ib + 16 * h;
      const v128_t l = wasm_i32x4_splat(ls[h]);
      acc1 = wasm_i32x4_add(acc1, wasm_i32x4_mul(iqg_dot16(g[h], q), l));
      acc2 = wasm_i32x4_add(acc2, wasm_i32x4_mul(iqg_dot16(e[h], q), l));
    }
  }
  float yd;
  memcpy(&yd, yb + offsetof(block_q8_K, d), 4);
  const v128_t sum = wasm_f32x4_add(
      wasm_f32x4_convert_i32x4(kq_hsum(acc1)),
      wasm_f32x4_mul(wasm_f32x4_splat(0.125f), wasm_f32x4_convert_i32x4(kq_hsum(acc2))));
  return wasm_f32x4_mul(wasm_f32x4_splat(scale_d(b) * yd), sum);
}

BQ_DOT_PROTO(iq1_m, q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  kq_dot(x, y, n / QK_K, XS, acc, term);
  return BQ_OK;
}

BQ_MATVEC_PROTO(iq1_m, q8_K, __simd128) {
  return kq_matvec(w, rows, cols, x, y, XS, term, bq_iq1_m_dot_q8_K__simd128);
}

BQ_DOT_PROTO(iq1_m, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  iq1_dot_f32(x, y, n / QK_K, XS, acc, scale_d, sub);
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(iq1_m, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  iq1_dequantize(x, y, n / QK_K, XS, scale_d, sub);
  return BQ_OK;
}
