/* The SIMD128 Q5_1 kernels, plus the Q5_1 . Q8_1 dot and matvec on relaxed dots (the 5-bit codes,
 * 0..31, are the 7-bit operand; no offset). */
#include "../simd128/q5_1.c"

#include "relaxed.h"

static inline v128_t risum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  bq_codes5(k, a + XQH, a + XQS, &lo, &hi);
  return bq_rdot_u5x32(lo, hi, b + YQS);
}

/* The terms of simd128/q5_1.c's step4, from the same integer sums. */
static inline v128_t rstep4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si =
      bq_hsum4_i32(risum(k, a, b), risum(k, a + XS, b + YS), risum(k, a + 2 * XS, b + 2 * YS),
                   risum(k, a + 3 * XS, b + 3 * YS));
  v128_t dy, sy;
  bq_q8_1_ds(k, b, &dy, &sy);
  return bq_terms_dm(k, a, XS, dy, sy, si);
}

BQ_DOT_PROTO(q5_1, q8_1, __relaxed) {
  if (n % BQ_BLK_q5_1) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_q5_1, XS, YS, acc, rstep4);
  return BQ_OK;
}

static inline v128_t rpstep4(const bq_k *k, const uint8_t *a, const bq_rprep *p, size_t i) {
  v128_t s[4];
  for (int b = 0; b < 4; b++) {
    v128_t lo, hi;
    bq_codes5(k, a + XS * b + XQH, a + XS * b + XQS, &lo, &hi);
    s[b] = bq_rdot_u5x32(lo, hi, p->q + (i + b) * BQ_B32);
  }
  const v128_t si = bq_hsum4_i32(s[0], s[1], s[2], s[3]);
  return bq_terms_dm(k, a, XS, wasm_v128_load(p->d + i), wasm_v128_load(p->s + i), si);
}

BQ_MATVEC_PROTO(q5_1, q8_1, __relaxed) {
  return bq_rmatvec(w, rows, cols, x, y, XS, YS, YQS, rpstep4, bq_q5_1_dot_q8_1__relaxed);
}
