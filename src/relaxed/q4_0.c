/* The SIMD128 Q4_0 kernels, plus the Q4_0 . Q8_0 dot and matvec on relaxed dots: the nibbles
 * (0..15) are the 7-bit operand and the -8 offset is folded through the activation sums. */
#include "../simd128/q4_0.c"

#include "relaxed.h"

static inline v128_t risum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t q = wasm_v128_load(a + XQS);
  return bq_rdot_off(wasm_v128_and(q, k->nib), bq_hi4(k, q), b + YQS, 3);
}

/* The terms of simd128/q4_0.c's step4, from the same integer sums. */
static inline v128_t rstep4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si =
      bq_hsum4_i32(risum(k, a, b), risum(k, a + XS, b + YS), risum(k, a + 2 * XS, b + 2 * YS),
                   risum(k, a + 3 * XS, b + 3 * YS));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = bq_h2f_x4(k, bq_load_u16x4(b, YS));
  return wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), dx), dy);
}

BQ_DOT_PROTO(q4_0, q8_0, __relaxed) {
  if (n % BQ_BLK_q4_0) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_q4_0, XS, YS, acc, rstep4);
  return BQ_OK;
}

static inline v128_t rpstep4(const bq_k *k, const uint8_t *a, const bq_rprep *p, size_t i) {
  v128_t s[4];
  for (int b = 0; b < 4; b++) {
    const v128_t q = wasm_v128_load(a + XS * b + XQS);
    s[b] = bq_rdot_u5x32(wasm_v128_and(q, k->nib), bq_hi4(k, q), p->q + (i + b) * BQ_B32);
  }
  /* sum (q - 8) a = sum q a - 8 sum a, exactly */
  const v128_t si = wasm_i32x4_sub(bq_hsum4_i32(s[0], s[1], s[2], s[3]),
                                   wasm_i32x4_shl(wasm_v128_load(p->sum + i), 3));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = wasm_v128_load(p->d + i);
  return wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), dx), dy);
}

BQ_MATVEC_PROTO(q4_0, q8_0, __relaxed) {
  return bq_rmatvec(w, rows, cols, x, y, XS, YS, YQS, rpstep4, bq_q4_0_dot_q8_0__relaxed);
}
