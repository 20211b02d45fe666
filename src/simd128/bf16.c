/* BF16 SIMD128 kernels; same results as ref/bf16.c (dot: same products, 4-lane sum). */
#include "simd.h"

/* Round to nearest even on the top half; NaN keeps its top half, forced quiet. */
static inline v128_t f2bf_x4(v128_t u) {
  const v128_t nan =
      wasm_i32x4_gt(wasm_v128_and(u, wasm_i32x4_splat(0x7FFFFFFF)), wasm_i32x4_splat(0x7F800000));
  const v128_t bias = wasm_i32x4_add(wasm_i32x4_splat(0x7FFF),
                                     wasm_v128_and(wasm_u32x4_shr(u, 16), wasm_i32x4_splat(1)));
  const v128_t r = wasm_u32x4_shr(wasm_i32x4_add(u, bias), 16);
  const v128_t q = wasm_v128_or(wasm_u32x4_shr(u, 16), wasm_i32x4_splat(0x40));
  return wasm_v128_bitselect(q, r, nan);
}

BQ_QUANTIZE_PROTO(bf16, __simd128) {
  uint8_t *o = y;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t a = f2bf_x4(wasm_v128_load(x + i)), b = f2bf_x4(wasm_v128_load(x + i + 4));
    wasm_v128_store(o + 2 * i, wasm_u16x8_narrow_i32x4(a, b)); /* lanes <= 0xFFFF */
  }
  for (; i < n; i++) bq_wr16(o + 2 * i, bq_fp32_to_bf16(x[i]));
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(bf16, __simd128) {
  const uint8_t *p = x;
  const v128_t zero = wasm_i32x4_splat(0);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t h = wasm_v128_load(p + 2 * i);
    wasm_v128_store(y + i, wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11));
    wasm_v128_store(y + i + 4, wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15));
  }
  for (; i < n; i++) y[i] = bq_bf16_to_fp32(bq_rd16(p + 2 * i));
  return BQ_OK;
}

#define LOAD_BF16(p) wasm_i32x4_shl(wasm_u32x4_load16x4(p), 16)

BQ_DOT_PROTO(bf16, f32, __simd128) {
  BQ_DOT_FLOAT(2, LOAD_BF16)
  (void)k;
}
