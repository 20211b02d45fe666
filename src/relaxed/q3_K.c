/* The SIMD128 Q3_K kernels, plus the Q3_K . Q8_K dot and matvec on relaxed dots: the 3-bit codes
 * plus 4 (0..7) are the 7-bit operand, the Q8_K codes the signed one, read straight from the
 * blocks; each sub-block scaled by bq_rkq_sub16 (relaxed.h), the -4 offset taken out with the
 * sub-block activation sums as in simd128/q3_K.c. Exact integer sums and the SIMD128 float term:
 * the SIMD128 kernels' bits. */
#include "../simd128/q3_K.c"

#include "relaxed.h"

/* Sub-block 8h + 2g + c: the codes of group g from the 16 code bytes and hmask bytes of chunk c of
 * half h, against Q8_K codes 128h + 32g + 16c + 0..15. */
static inline v128_t risum(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  const uint8_t *q8 = yb + offsetof(block_q8_K, qs);
  const v128_t sc = scales(k, b);
  const v128_t s16[2] = {wasm_i16x8_extend_low_i8x16(sc), wasm_i16x8_extend_high_i8x16(sc)};
  v128_t acc = wasm_i32x4_splat(0);
#pragma clang loop unroll(full)
  for (int hc = 0; hc < 4; hc++) {
    const int h = hc >> 1, c = hc & 1;
    const v128_t v = wasm_v128_load(b + XQS + 32 * h + 16 * c);
    const v128_t m = wasm_v128_load(b + XHM + 16 * c);
    for (int g = 0; g < 4; g++)
      acc = bq_rkq_sub16(acc, codes(k, v, m, h, g), q8 + 128 * h + 32 * g + 16 * c, s16[h],
                         8 * h + 2 * g + c);
  }
  /* sum sc_j (S_j - 4 A_j) */
  return kq_hsum(wasm_i32x4_sub(acc, wasm_i32x4_shl(kq_act_scaled(a, sc), 2)));
}

/* simd128/q3_K.c's term on the relaxed integer sum. */
static inline v128_t rterm(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  float yd;
  memcpy(&yd, yb + offsetof(block_q8_K, d), 4);
  const float dd = bq_h2f_fast(bq_rd16(b + XD)) * yd;
  if (__builtin_expect(!(fabsf(dd) < KQ_DD_BIG), 0)) return wasm_f32x4_splat(big_term(b, yb, dd));
  return wasm_f32x4_mul(wasm_f32x4_splat(dd), wasm_f32x4_convert_i32x4(risum(k, b, yb, a)));
}

BQ_DOT_PROTO(q3_K, q8_K, __relaxed) {
  if (n % QK_K) return BQ_EINVAL;
  kq_dot(x, y, n / QK_K, XS, acc, rterm);
  return BQ_OK;
}

BQ_MATVEC_PROTO(q3_K, q8_K, __relaxed) {
  return kq_matvec(w, rows, cols, x, y, XS, rterm, bq_q3_K_dot_q8_K__relaxed);
}
