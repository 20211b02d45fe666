/* Q8_1 SIMD128 kernels; same results as ref/q8_1.c. */
#include "q8.h"

BQ_QUANTIZE_PROTO(q8_1, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const bq_k k = bq_consts();
  uint8_t *o = y;
  const size_t nb = n / QK;
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, x += 4 * QK, o += 4 * 36) {
    v128_t d, sums;
    if (!bq_q8_quant4(&k, x, o, 36, 4, &d, &sums)) {
      for (int k = 0; k < 4; k++) bq_q8_1_quantize_block__ref(x + k * QK, o + k * 36);
      continue;
    }
    const v128_t s = bq_f2h_x4(&k, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sums), d));
    bq_store_u16x4(o + 2, 36, s);
  }
  for (; i < nb; i++, x += QK, o += 36) bq_q8_1_quantize_block__ref(x, o);
  return BQ_OK;
}

static inline void dq_block(const bq_k *k, const uint8_t *p, v128_t d24, v128_t m, v128_t w[8]) {
  (void)k, (void)m;
  bq_q8_weights(p, 4, d24, w);
}

BQ_DOT_PROTO(q8_1, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / QK, 36, BQ_D_REG, BQ_Q8_DEXP, acc, dq_block);
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q8_1, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dequantize_blocks(x, y, n / QK, 36, BQ_D_REG, BQ_Q8_DEXP, dq_block);
  return BQ_OK;
}
