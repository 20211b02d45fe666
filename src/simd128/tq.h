/* What the SIMD128 kernels of the ternary formats (tq1_0.c, tq2_0.c) share: for the quantizers, a
 * super-block's scale and its 256 trits, bit-exact with the reference (src/ref/tq1_0.c, tq2_0.c);
 * for the decoders and dots, vector constants and the decoded values' multiply.
 *
 * A block with a NaN takes the reference: ggml's running max then restarts after the NaN, so
 * earlier elements may exceed the scale and give trits far outside 0..2, whose low bits the
 * reference keeps exactly. Without NaN, max |x| is the true maximum, every x * (1 / max) is within
 * [-1, 1] (or NaN/Inf when max is Inf or 1 / max overflows, which give trit 1 as lroundf's
 * LONG_MIN + 1 does), and a trit is lroundf(v) + 1 in 0..2. */
#ifndef BQ_SIMD_TQ_H
#define BQ_SIMD_TQ_H

#include "../iquants4.h"
#include "kq236.h" /* kq_dot, kq_matvec, kq_row_sum: one float term per super-block in lane 0 */
#include "simd.h"

BQ_DEQUANTIZE_PROTO(tq1_0, __simd128);
BQ_DEQUANTIZE_PROTO(tq2_0, __simd128);
BQ_DOT_PROTO(tq1_0, q8_K, __simd128);
BQ_DOT_PROTO(tq2_0, q8_K, __simd128);

/* Vector constants, loaded once per call (consts.c says why); the table is in tq2_0.c. */
typedef struct {
  uint32_t m03[4], one8[4], flip[4], t1[4], t2[4], fe[4];
} tq_const_table;
extern tq_const_table bq_tq_consts;

typedef struct {
  v128_t m03, one8, flip, t1, t2, fe;
} tq_k;

static inline tq_k tq_consts(void) {
  const tq_k k = {wasm_v128_load(bq_tq_consts.m03),  wasm_v128_load(bq_tq_consts.one8),
                  wasm_v128_load(bq_tq_consts.flip), wasm_v128_load(bq_tq_consts.t1),
                  wasm_v128_load(bq_tq_consts.t2),   wasm_v128_load(bq_tq_consts.fe)};
  return k;
}

/* The scale d of a super-block (fp16 bits h) times 2^-24, splat, for bq_top_bytes_mul: the
 * codes minus 1 go to the top byte of i32 lanes (2^24 times their value), and that product with
 * d * 2^-24 is (code - 1) * d exactly, as the reference's (float)(code - 1) * d, zeros' signs,
 * Inf * 0 and NaN scales included (d * 2^-24 is at least 2^-48: never subnormal). */
static inline v128_t bq_tq_d24(uint16_t h) { return wasm_f32x4_splat(bq_h2f_fast(h) * 0x1p-24f); }

/* s[t] += w[t] times the floats v[4t..4t + 3], t = 0..3. */
static inline void bq_tq_mul_add(const v128_t w[4], const float *v, v128_t s[4]) {
  for (int t = 0; t < 4; t++)
    s[t] = wasm_f32x4_add(s[t], wasm_f32x4_mul(w[t], wasm_v128_load(v + 4 * t)));
}

/* Whether the 256 values at x hold a NaN. */
static inline int bq_tq_has_nan(const float *x) {
  v128_t nan = wasm_i32x4_splat(0);
  for (int j = 0; j < QK_K; j += 4) {
    const v128_t v = wasm_v128_load(x + j);
    nan = wasm_v128_or(nan, wasm_f32x4_ne(v, v));
  }
  return wasm_v128_any_true(nan);
}

/* max |x| over 256 values without NaN, in every lane (fabsf never gives -0, so the lane order is
 * free). */
static inline v128_t bq_tq_amax(const float *x) {
  v128_t m = wasm_f32x4_splat(0.0f);
  for (int j = 0; j < QK_K; j += 4) m = wasm_f32x4_max(m, wasm_f32x4_abs(wasm_v128_load(x + j)));
  m = wasm_f32x4_max(m, wasm_i32x4_shuffle(m, m, 2, 3, 0, 1));
  return wasm_f32x4_max(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
}

/* The reference's id = amax != 0 ? 1 / amax : 0, in every lane. */
static inline v128_t bq_tq_inverse(v128_t amax) {
  return wasm_v128_and(wasm_f32x4_div(wasm_f32x4_splat(1.0f), amax),
                       wasm_f32x4_ne(amax, wasm_f32x4_splat(0.0f)));
}

/* Stores d = fp16(amax) (bq_fp32_to_fp16, as bq_f2h_x4 converts) at p. */
static inline void bq_tq_store_d(uint8_t *p, v128_t amax) {
  const bq_k k = bq_consts();
  wasm_v128_store16_lane(p, bq_f2h_x4(&k, amax), 0);
}

/* bq_tq_trit(v) for four lanes: lroundf (half away from zero) + 1, or 1 where v is NaN or not
 * below 2^31 in magnitude (Inf here). trunc(v) and v - trunc(v) are exact. */
static inline v128_t bq_tq_trits4(v128_t v) {
  const v128_t t = wasm_f32x4_trunc(v);
  const v128_t up = wasm_f32x4_ge(wasm_f32x4_abs(wasm_f32x4_sub(v, t)), wasm_f32x4_splat(0.5f));
  const v128_t one =
      wasm_v128_or(wasm_f32x4_splat(1.0f), wasm_v128_and(v, wasm_i32x4_splat(INT32_MIN)));
  const v128_t r = wasm_f32x4_add(t, wasm_v128_and(one, up));
  const v128_t ok = wasm_f32x4_lt(wasm_f32x4_abs(v), wasm_f32x4_splat(2147483648.0f));
  const v128_t q = wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(r), wasm_i32x4_splat(1));
  return wasm_v128_bitselect(q, wasm_i32x4_splat(1), ok);
}

/* The trits (0..2) of the 256 values x * id into t, one byte each. */
static inline void bq_tq_trits(const float *x, v128_t id, uint8_t *t) {
  for (int j = 0; j < QK_K; j += 16) {
    v128_t q[4];
    for (int k = 0; k < 4; k++)
      q[k] = bq_tq_trits4(wasm_f32x4_mul(wasm_v128_load(x + j + 4 * k), id));
    const v128_t lo = wasm_i16x8_narrow_i32x4(q[0], q[1]), hi = wasm_i16x8_narrow_i32x4(q[2], q[3]);
    wasm_v128_store(t + j, wasm_u8x16_narrow_i16x8(lo, hi));
  }
}

#endif
