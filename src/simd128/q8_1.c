/* Q8_1 SIMD128 kernels; same results as ref/q8_1.c. */
#include "q8.h"

/* This file's block geometry (internal.h): XS bytes per block, X<field> the offsets of its
 * fields. */
enum { XS = sizeof(block_q8_1), XSUM = offsetof(block_q8_1, s), XQS = offsetof(block_q8_1, qs) };
static_assert(BQ_BLK_q8_1 == BQ_B32, "the helpers take 32-value blocks");

BQ_QUANTIZE_PROTO(q8_1, __simd128) {
  if (n % BQ_BLK_q8_1) return BQ_EINVAL;
  const bq_k k = bq_consts();
  uint8_t *o = y;
  const size_t nb = n / BQ_BLK_q8_1;
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, x += 4 * BQ_B32, o += 4 * XS) {
    v128_t d, sums;
    if (!bq_q8_quant4(&k, x, o, XS, XQS, &d, &sums)) {
      for (int k = 0; k < 4; k++) bq_q8_1_quantize_block__ref(x + k * BQ_B32, o + k * XS);
      continue;
    }
    const v128_t s = bq_f2h_x4(&k, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sums), d));
    bq_store_u16x4(o + XSUM, XS, s);
  }
  for (; i < nb; i++, x += BQ_B32, o += XS) bq_q8_1_quantize_block__ref(x, o);
  return BQ_OK;
}

static inline void dq_block(const bq_k *k, const uint8_t *p, v128_t d24, v128_t m, v128_t w[8]) {
  (void)k, (void)m;
  bq_q8_weights(p, XQS, d24, w);
}

BQ_DOT_PROTO(q8_1, f32, __simd128) {
  if (n % BQ_BLK_q8_1) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / BQ_BLK_q8_1, XS, BQ_D_REG, BQ_Q8_DEXP, acc, dq_block);
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q8_1, __simd128) {
  if (n % BQ_BLK_q8_1) return BQ_EINVAL;
  bq_dequantize_blocks(x, y, n / BQ_BLK_q8_1, XS, BQ_D_REG, BQ_Q8_DEXP, dq_block);
  return BQ_OK;
}
