/* Q5_1 SIMD128 kernels; same results as ref/q5_1.c (dot: same per-block terms, 4-lane sum). */
#include "simd.h"

BQ_DEQUANTIZE_PROTO(q5_1, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / QK; i++, p += 24, y += QK) {
    const v128_t d = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(p)));
    const v128_t m = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(p + 2)));
    v128_t lo, hi;
    bq_codes5(p + 4, p + 8, &lo, &hi);
    bq_store16_affine(y, lo, d, m);
    bq_store16_affine(y + 16, hi, d, m);
  }
  return BQ_OK;
}

static inline v128_t isum(const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  bq_codes5(a + 4, a + 8, &lo, &hi);
  return bq_dot_i8x32(lo, hi, wasm_v128_load(b + 4), wasm_v128_load(b + 20));
}

/* Terms (dx * dy) * sumi + mx * sy of four blocks. */
static inline v128_t step4(const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(a, b), isum(a + 24, b + 36), isum(a + 48, b + 72),
                                 isum(a + 72, b + 108));
  const v128_t xa = bq_load_u32x4(a, 24), yb = bq_load_u32x4(b, 36);
  const v128_t lo16 = wasm_i32x4_splat(0xFFFF);
  const v128_t dx = bq_h2f_x4(wasm_v128_and(xa, lo16)), mx = bq_h2f_x4(wasm_u32x4_shr(xa, 16));
  const v128_t dy = bq_h2f_x4(wasm_v128_and(yb, lo16)), sy = bq_h2f_x4(wasm_u32x4_shr(yb, 16));
  return wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_mul(dx, dy), wasm_f32x4_convert_i32x4(si)),
                        wasm_f32x4_mul(mx, sy));
}

BQ_DOT_PROTO(q5_1, q8_1, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot4(x, y, n / QK, 24, 36, acc, step4);
  return BQ_OK;
}

static inline v128_t block_f32(const uint8_t *a, const float *v) {
  const v128_t d = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(a)));
  const v128_t m = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(a + 2)));
  v128_t lo, hi, w[8];
  bq_codes5(a + 4, a + 8, &lo, &hi);
  bq_expand16(w, lo, 0.0f, d);
  bq_expand16(w + 4, hi, 0.0f, d);
  for (int k = 0; k < 8; k++)
    w[k] = wasm_f32x4_mul(wasm_f32x4_add(w[k], m), wasm_v128_load(v + 4 * k));
  return bq_sum8(w);
}

BQ_DOT_PROTO(q5_1, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / QK, 24, acc, block_f32);
  return BQ_OK;
}
