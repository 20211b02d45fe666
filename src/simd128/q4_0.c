/* Q4_0 SIMD128 kernels; same results as ref/q4_0.c (dot: same per-block terms, 4-lane sum). */
#include "simd.h"

BQ_DEQUANTIZE_PROTO(q4_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *p = x;
  const v128_t m4 = wasm_i8x16_splat(0x0F);
  for (size_t i = 0; i < n / QK; i++, p += 18, y += QK) {
    const v128_t d = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(p)));
    const v128_t q = wasm_v128_load(p + 2);
    bq_store16_scaled(y, wasm_v128_and(q, m4), 8.0f, d);
    bq_store16_scaled(y + 16, wasm_u8x16_shr(q, 4), 8.0f, d);
  }
  return BQ_OK;
}

static inline v128_t isum(const uint8_t *a, const uint8_t *b) {
  const v128_t q = wasm_v128_load(a + 2);
  const v128_t lo = wasm_i8x16_sub(wasm_v128_and(q, wasm_i8x16_splat(0x0F)), wasm_i8x16_splat(8));
  const v128_t hi = wasm_i8x16_sub(wasm_u8x16_shr(q, 4), wasm_i8x16_splat(8));
  return bq_dot_i8x32(lo, hi, wasm_v128_load(b + 2), wasm_v128_load(b + 18));
}

/* Terms ((float)sumi * dx) * dy of four blocks. */
static inline v128_t step4(const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(a, b), isum(a + 18, b + 34), isum(a + 36, b + 68),
                                 isum(a + 54, b + 102));
  const v128_t dx = bq_h2f_x4(bq_load_u16x4(a, 18)), dy = bq_h2f_x4(bq_load_u16x4(b, 34));
  return wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), dx), dy);
}

BQ_DOT_PROTO(q4_0, q8_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot4(x, y, n / QK, 18, 34, acc, step4);
  return BQ_OK;
}

static inline v128_t block_f32(const uint8_t *a, const float *v) {
  const v128_t d = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(a)));
  const v128_t q = wasm_v128_load(a + 2);
  v128_t w[8];
  bq_expand16(w, wasm_v128_and(q, wasm_i8x16_splat(0x0F)), 8.0f, d);
  bq_expand16(w + 4, wasm_u8x16_shr(q, 4), 8.0f, d);
  for (int k = 0; k < 8; k++) w[k] = wasm_f32x4_mul(w[k], wasm_v128_load(v + 4 * k));
  return bq_sum8(w);
}

BQ_DOT_PROTO(q4_0, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / QK, 18, acc, block_f32);
  return BQ_OK;
}
