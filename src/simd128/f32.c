/* F32 SIMD128 dot; quantize and dequantize are copies and use the reference. */
#include "simd.h"

#define LOAD_F32(p) wasm_v128_load(p)

BQ_DOT_PROTO(f32, f32, __simd128) {
  BQ_DOT_FLOAT(4, LOAD_F32)
  (void)k;
}
