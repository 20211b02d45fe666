/* Q8_0 SIMD128 kernels; same results as ref/q8_0.c (dot: same per-block terms, 4-lane sum). */
#include "q8.h"

/* This file's block geometry (internal.h): XS/YS bytes per weight/activation block, X<field> the
 * offsets of the weight block's fields, YQS of the activation codes. */
enum { XS = sizeof(block_q8_0), YS = XS, XQS = offsetof(block_q8_0, qs), YQS = XQS };
static_assert(BQ_BLK_q8_0 == BQ_B32, "the helpers take 32-value blocks");

BQ_QUANTIZE_PROTO(q8_0, __simd128) {
  if (n % BQ_BLK_q8_0) return BQ_EINVAL;
  const bq_k k = bq_consts();
  uint8_t *o = y;
  const size_t nb = n / BQ_BLK_q8_0;
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, x += 4 * BQ_B32, o += 4 * XS) {
    v128_t d, sums;
    if (!bq_q8_quant4(&k, x, o, XS, XQS, &d, &sums))
      for (int k = 0; k < 4; k++) bq_q8_0_quantize_block__ref(x + k * BQ_B32, o + k * XS);
  }
  for (; i < nb; i++, x += BQ_B32, o += XS) bq_q8_0_quantize_block__ref(x, o);
  return BQ_OK;
}

static inline void dq_block(const bq_k *k, const uint8_t *p, v128_t d24, v128_t m, v128_t w[8]) {
  (void)k, (void)m;
  bq_q8_weights(p, XQS, d24, w);
}

/* The input is touched in runs of 1024 weights (32 blocks, 17 lines) instead of BQ_TOUCH_WEIGHTS
 * (512, 9 lines): Q8_0 reads 1.06 bytes per weight, twice Q4_0's. Zen 4 host, 16M weights, twelve
 * rounds of paired instances (3-4 of each build, mean ratio to the ceiling), 512 -> 1024: median
 * 0.75 -> 0.80 (0.69-0.79 -> 0.75-0.84, better in eleven); in one round 768 gave 0.71, 1536 0.75
 * and 2048 0.73 where 512 gave 0.69 and 1024 0.76. At 64K weights (L2) a median 3% slower
 * (0.76-0.90 -> 0.69-0.90; 5.4-6.1x the scalar build). */
BQ_DEQUANTIZE_PROTO(q8_0, __simd128) {
  if (n % BQ_BLK_q8_0) return BQ_EINVAL;
  bq_dequantize_blocks_run(x, y, n / BQ_BLK_q8_0, XS, BQ_D_REG, BQ_Q8_DEXP, dq_block,
                           1024 / BQ_B32);
  return BQ_OK;
}

static inline v128_t isum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  (void)k;
  return bq_dot_i8x32(wasm_v128_load(a + XQS), wasm_v128_load(a + XQS + 16),
                      wasm_v128_load(b + YQS), wasm_v128_load(b + YQS + 16));
}

/* Terms sumi * (dx * dy) of four blocks. */
static inline v128_t step4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(k, a, b), isum(k, a + XS, b + YS),
                                 isum(k, a + 2 * XS, b + 2 * YS), isum(k, a + 3 * XS, b + 3 * YS));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = bq_h2f_x4(k, bq_load_u16x4(b, XS));
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), wasm_f32x4_mul(dx, dy));
}

BQ_DOT_PROTO(q8_0, q8_0, __simd128) {
  if (n % BQ_BLK_q8_0) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_q8_0, XS, YS, acc, step4);
  return BQ_OK;
}

BQ_DOT_PROTO(q8_0, f32, __simd128) {
  if (n % BQ_BLK_q8_0) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / BQ_BLK_q8_0, XS, BQ_D_REG, BQ_Q8_DEXP, acc, dq_block);
  return BQ_OK;
}

/* matvec: four blocks of a row against prepared activations (same terms as step4). */
static inline v128_t pstep4(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i) {
  (void)k;
  v128_t s[4];
  for (int b = 0; b < 4; b++)
    s[b] = bq_dot_i8_i16(wasm_v128_load(a + XS * b + XQS), wasm_v128_load(a + XS * b + XQS + 16),
                         p->q + (i + b) * BQ_B32);
  const v128_t si = bq_hsum4_i32(s[0], s[1], s[2], s[3]);
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = wasm_v128_load(p->d + i);
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), wasm_f32x4_mul(dx, dy));
}

BQ_MATVEC_PROTO(q8_0, q8_0, __simd128) {
  return bq_matvec_prepared(w, rows, cols, x, y, XS, YS, YQS, BQ_PREP_PLAIN, pstep4,
                            bq_q8_0_dot_q8_0__simd128);
}
