/* Q5_0 SIMD128 kernels; same results as ref/q5_0.c (dot: same per-block terms, 4-lane sum). */
#include "simd.h"

BQ_DEQUANTIZE_PROTO(q5_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / QK; i++, p += 22, y += QK) {
    const v128_t d = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(p)));
    v128_t lo, hi;
    bq_codes5(p + 2, p + 6, &lo, &hi);
    bq_store16_scaled(y, lo, 16.0f, d);
    bq_store16_scaled(y + 16, hi, 16.0f, d);
  }
  return BQ_OK;
}

static inline v128_t isum(const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  bq_codes5(a + 2, a + 6, &lo, &hi);
  const v128_t s16 = wasm_i8x16_splat(16);
  return bq_dot_i8x32(wasm_i8x16_sub(lo, s16), wasm_i8x16_sub(hi, s16), wasm_v128_load(b + 2),
                      wasm_v128_load(b + 18));
}

/* Terms (dx * dy) * sumi of four blocks. */
static inline v128_t step4(const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(a, b), isum(a + 22, b + 34), isum(a + 44, b + 68),
                                 isum(a + 66, b + 102));
  const v128_t dx = bq_h2f_x4(bq_load_u16x4(a, 22)), dy = bq_h2f_x4(bq_load_u16x4(b, 34));
  return wasm_f32x4_mul(wasm_f32x4_mul(dx, dy), wasm_f32x4_convert_i32x4(si));
}

BQ_DOT_PROTO(q5_0, q8_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot4(x, y, n / QK, 22, 34, acc, step4);
  return BQ_OK;
}

static inline v128_t block_f32(const uint8_t *a, const float *v) {
  const v128_t d = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(a)));
  v128_t lo, hi, w[8];
  bq_codes5(a + 2, a + 6, &lo, &hi);
  bq_expand16(w, lo, 16.0f, d);
  bq_expand16(w + 4, hi, 16.0f, d);
  for (int k = 0; k < 8; k++) w[k] = wasm_f32x4_mul(w[k], wasm_v128_load(v + 4 * k));
  return bq_sum8(w);
}

BQ_DOT_PROTO(q5_0, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / QK, 22, acc, block_f32);
  return BQ_OK;
}
