/* F16 SIMD128 kernels; same results as ref/f16.c (dot: same products, 4-lane sum). */
#include "simd.h"

BQ_QUANTIZE_PROTO(f16, __simd128) {
  const bq_k k = bq_consts();
  uint8_t *o = y;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t h0 = bq_f2h_x4(&k, wasm_v128_load(x + i)),
                 h1 = bq_f2h_x4(&k, wasm_v128_load(x + i + 4));
    wasm_v128_store(o + 2 * i,
                    wasm_u16x8_narrow_i32x4(h0, h1)); /* lanes <= 0xFFFF: no saturation */
  }
  for (; i < n; i++) bq_wr16(o + 2 * i, bq_fp32_to_fp16(x[i]));
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(f16, __simd128) {
  const bq_k k = bq_consts();
  const uint8_t *p = x;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t h = wasm_v128_load(p + 2 * i);
    wasm_v128_store(y + i, bq_h2f_x4(&k, wasm_u32x4_extend_low_u16x8(h)));
    wasm_v128_store(y + i + 4, bq_h2f_x4(&k, wasm_u32x4_extend_high_u16x8(h)));
  }
  for (; i < n; i++) y[i] = bq_fp16_to_fp32(bq_rd16(p + 2 * i));
  return BQ_OK;
}

#define LOAD_F16(p) bq_h2f_x4(&k, wasm_u32x4_load16x4(p))

BQ_DOT_PROTO(f16, f32, __simd128) { BQ_DOT_FLOAT(2, LOAD_F16) }
