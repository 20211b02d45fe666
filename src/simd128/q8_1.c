/* Q8_1 SIMD128 kernels; same results as ref/q8_1.c. */
#include "q8.h"

BQ_QUANTIZE_PROTO(q8_1, __simd128) {
  if (n % QK) return BQ_EINVAL;
  uint8_t *o = y;
  const size_t nb = n / QK;
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, x += 4 * QK, o += 4 * 36) {
    v128_t d, sums;
    if (!bq_q8_quant4(x, o, 36, 4, &d, &sums)) {
      for (int k = 0; k < 4; k++) bq_q8_1_quantize_block__ref(x + k * QK, o + k * 36);
      continue;
    }
    const v128_t s = bq_f2h_x4(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sums), d));
    wasm_v128_store16_lane(o + 2, s, 0);
    wasm_v128_store16_lane(o + 36 + 2, s, 2);
    wasm_v128_store16_lane(o + 72 + 2, s, 4);
    wasm_v128_store16_lane(o + 108 + 2, s, 6);
  }
  for (; i < nb; i++, x += QK, o += 36) bq_q8_1_quantize_block__ref(x, o);
  return BQ_OK;
}

static inline v128_t block_f32(const uint8_t *a, const float *v) { return bq_q8_block_f32(a, v, 4); }

BQ_DOT_PROTO(q8_1, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / QK, 36, acc, block_f32);
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q8_1, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *p = x;
  const v128_t flip = wasm_i8x16_splat((int8_t)0x80);
  for (size_t i = 0; i < n / QK; i++, p += 36, y += QK) {
    const v128_t d = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(p)));
    bq_store16_scaled(y, wasm_v128_xor(wasm_v128_load(p + 4), flip), 128.0f, d);
    bq_store16_scaled(y + 16, wasm_v128_xor(wasm_v128_load(p + 20), flip), 128.0f, d);
  }
  return BQ_OK;
}
