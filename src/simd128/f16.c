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
  for (; i + 16 <= n; i += 16) {
    /* each half doubled into a u32 lane, so it is in the lane's top half */
    const v128_t h0 = wasm_v128_load(p + 2 * i), h1 = wasm_v128_load(p + 2 * i + 16);
    wasm_v128_store(y + i, bq_h2f_top(&k, wasm_i16x8_shuffle(h0, h0, 0, 0, 1, 1, 2, 2, 3, 3)));
    wasm_v128_store(y + i + 4, bq_h2f_top(&k, wasm_i16x8_shuffle(h0, h0, 4, 4, 5, 5, 6, 6, 7, 7)));
    wasm_v128_store(y + i + 8, bq_h2f_top(&k, wasm_i16x8_shuffle(h1, h1, 0, 0, 1, 1, 2, 2, 3, 3)));
    wasm_v128_store(y + i + 12, bq_h2f_top(&k, wasm_i16x8_shuffle(h1, h1, 4, 4, 5, 5, 6, 6, 7, 7)));
  }
  for (; i < n; i++) y[i] = bq_fp16_to_fp32(bq_rd16(p + 2 * i));
  return BQ_OK;
}

#define LOAD_F16(p) bq_h2f_x4(&k, wasm_u32x4_load16x4(p))

BQ_DOT_PROTO(f16, f32, __simd128) { BQ_DOT_FLOAT(2, LOAD_F16) }
