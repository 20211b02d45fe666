/* The SIMD128 Q5_0 kernels, plus the Q5_0 . Q8_0 dot and matvec on relaxed dots: the 5-bit codes
 * (0..31) are the 7-bit operand and the -16 offset is folded through the activation sums. */
#include "../simd128/q5_0.c"

#include "relaxed.h"

static inline v128_t risum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  bq_codes5(k, a + XQH, a + XQS, &lo, &hi);
  return bq_rdot_off(lo, hi, b + YQS, 4);
}

/* The terms of simd128/q5_0.c's step4, from the same integer sums. */
static inline v128_t rstep4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si =
      bq_hsum4_i32(risum(k, a, b), risum(k, a + XS, b + YS), risum(k, a + 2 * XS, b + 2 * YS),
                   risum(k, a + 3 * XS, b + 3 * YS));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = bq_h2f_x4(k, bq_load_u16x4(b, YS));
  return wasm_f32x4_mul(wasm_f32x4_mul(dx, dy), wasm_f32x4_convert_i32x4(si));
}

BQ_DOT_PROTO(q5_0, q8_0, __relaxed) {
  if (n % BQ_BLK_q5_0) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_q5_0, XS, YS, acc, rstep4);
  return BQ_OK;
}

static inline v128_t rpstep4(const bq_k *k, const uint8_t *a, const bq_rprep *p, size_t i) {
  v128_t s[4];
  for (int b = 0; b < 4; b++) {
    v128_t lo, hi;
    bq_codes5(k, a + XS * b + XQH, a + XS * b + XQS, &lo, &hi);
    s[b] = bq_rdot_u5x32(lo, hi, p->q + (i + b) * BQ_B32);
  }
  /* sum (q - 16) a = sum q a - 16 sum a, exactly */
  const v128_t si = wasm_i32x4_sub(bq_hsum4_i32(s[0], s[1], s[2], s[3]),
                                   wasm_i32x4_shl(wasm_v128_load(p->sum + i), 4));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = wasm_v128_load(p->d + i);
  return wasm_f32x4_mul(wasm_f32x4_mul(dx, dy), wasm_f32x4_convert_i32x4(si));
}

BQ_MATVEC_PROTO(q5_0, q8_0, __relaxed) {
  return bq_rmatvec(w, rows, cols, x, y, XS, YS, YQS, rpstep4, bq_q5_0_dot_q8_0__relaxed);
}
