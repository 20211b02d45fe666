/* TQ2_0 SIMD128 quantizer, bit-exact with ref/tq2_0.c (tq.h: blocks with a NaN take the
 * reference). Byte j of qs holds the trits of elements j, j + 32, j + 64, j + 96 of its half in bit
 * pairs 0, 2, 4, 6: four 16-byte rows of trits shifted and or-ed. */
#include "tq.h"

BQ_QUANTIZE_PROTO(tq2_0, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    const float *xb = x + i * QK_K;
    uint8_t *out = (uint8_t *)y + i * sizeof(block_tq2_0);
    if (bq_tq_has_nan(xb)) {
      bq_tq2_0_quantize__ref(xb, out, QK_K);
      continue;
    }
    const v128_t amax = bq_tq_amax(xb);
    uint8_t t[QK_K] __attribute__((aligned(16)));
    bq_tq_trits(xb, bq_tq_inverse(amax), t);
    for (int h = 0; h < 2; h++)
      for (int j = 0; j < 32; j += 16) {
        const uint8_t *r = t + 128 * h + j;
        v128_t b = wasm_v128_load(r);
        b = wasm_v128_or(b, wasm_i8x16_shl(wasm_v128_load(r + 32), 2));
        b = wasm_v128_or(b, wasm_i8x16_shl(wasm_v128_load(r + 64), 4));
        b = wasm_v128_or(b, wasm_i8x16_shl(wasm_v128_load(r + 96), 6));
        wasm_v128_store(out + offsetof(block_tq2_0, qs) + 32 * h + j, b);
      }
    bq_tq_store_d(out + offsetof(block_tq2_0, d), amax);
  }
  return BQ_OK;
}
