/* The SIMD128 Q8_0 kernels, plus the Q8_0 . Q8_0 dot and matvec on relaxed dots: the activations
 * split into their low 7 bits and their sign (bq_rdot_i8x32), both valid 7-bit operands. */
#include "../simd128/q8_0.c"

#include "relaxed.h"

/* The terms of simd128/q8_0.c's step4, from the same integer sums. */
static inline v128_t rstep4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si =
      bq_hsum4_i32(bq_rdot_i8x32(a + XQS, b + YQS), bq_rdot_i8x32(a + XS + XQS, b + YS + YQS),
                   bq_rdot_i8x32(a + 2 * XS + XQS, b + 2 * YS + YQS),
                   bq_rdot_i8x32(a + 3 * XS + XQS, b + 3 * YS + YQS));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = bq_h2f_x4(k, bq_load_u16x4(b, XS));
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), wasm_f32x4_mul(dx, dy));
}

BQ_DOT_PROTO(q8_0, q8_0, __relaxed) {
  if (n % BQ_BLK_q8_0) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_q8_0, XS, YS, acc, rstep4);
  return BQ_OK;
}

/* With the split prepared once: sum w a = sum w (a & 127) - 128 sum_{a < 0} w. */
static inline v128_t rpstep4(const bq_k *k, const uint8_t *a, const bq_rprep *p, size_t i) {
  v128_t s[4];
  const v128_t z = wasm_i32x4_splat(0);
  for (int b = 0; b < 4; b++) {
    const uint8_t *wq = a + XS * b + XQS;
    const size_t o = (i + b) * BQ_B32;
    const v128_t w0 = wasm_v128_load(wq), w1 = wasm_v128_load(wq + 16);
    const v128_t lo =
        bq_rdot(w0, wasm_v128_load(p->q7 + o), bq_rdot(w1, wasm_v128_load(p->q7 + o + 16), z));
    const v128_t neg =
        bq_rdot(w0, wasm_v128_load(p->qn + o), bq_rdot(w1, wasm_v128_load(p->qn + o + 16), z));
    s[b] = wasm_i32x4_sub(lo, wasm_i32x4_shl(neg, 7));
  }
  const v128_t si = bq_hsum4_i32(s[0], s[1], s[2], s[3]);
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = wasm_v128_load(p->d + i);
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), wasm_f32x4_mul(dx, dy));
}

BQ_MATVEC_PROTO(q8_0, q8_0, __relaxed) {
  return bq_rmatvec(w, rows, cols, x, y, XS, YS, YQS, rpstep4, bq_q8_0_dot_q8_0__relaxed);
}
