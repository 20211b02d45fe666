/* Q5_0 SIMD128 kernels; same results as ref/q5_0.c (dot: same per-block terms, 4-lane sum). */
#include "q45.h"

/* This file's block geometry (internal.h): XS/YS bytes per weight/activation block, X<field> the
 * offsets of the weight block's fields, YQS of the activation codes. */
enum {
  XS = sizeof(block_q5_0),
  YS = sizeof(block_q8_0),
  XQH = offsetof(block_q5_0, qh),
  XQS = offsetof(block_q5_0, qs),
  YQS = offsetof(block_q8_0, qs)
};
static_assert(BQ_BLK_q5_0 == BQ_B32 && BQ_BLK_q8_0 == BQ_B32, "the helpers take 32-value blocks");

/* The 32 weights of the block at p, as 8 vectors: 5-bit codes assembled as bytes. */
static inline void weights(const bq_k *k, const uint8_t *p, v128_t d, v128_t m, v128_t w[8]) {
  v128_t lo, hi, c[4];
  bq_codes5(k, p + XQH, p + XQS, &lo, &hi);
  for (int h = 0; h < 2; h++) {
    bq_bytes_to_magic(k, h ? hi : lo, c);
    for (int j = 0; j < 4; j++) w[4 * h + j] = wasm_f32x4_mul(wasm_f32x4_sub(c[j], k->off16), d);
  }
  (void)m;
}

BQ_DEQUANTIZE_PROTO(q5_0, __simd128) {
  if (n % BQ_BLK_q5_0) return BQ_EINVAL;
  bq_dequantize_blocks(x, y, n / BQ_BLK_q5_0, XS, BQ_D_REG, 0, weights);
  return BQ_OK;
}

static inline v128_t isum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  bq_codes5(k, a + XQH, a + XQS, &lo, &hi);
  return bq_dot_i8x32(wasm_i8x16_sub(lo, k->b16), wasm_i8x16_sub(hi, k->b16),
                      wasm_v128_load(b + YQS), wasm_v128_load(b + YQS + 16));
}

/* Terms (dx * dy) * sumi of four blocks. */
static inline v128_t step4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(k, a, b), isum(k, a + XS, b + YS),
                                 isum(k, a + 2 * XS, b + 2 * YS), isum(k, a + 3 * XS, b + 3 * YS));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = bq_h2f_x4(k, bq_load_u16x4(b, YS));
  return wasm_f32x4_mul(wasm_f32x4_mul(dx, dy), wasm_f32x4_convert_i32x4(si));
}

BQ_DOT_PROTO(q5_0, q8_0, __simd128) {
  if (n % BQ_BLK_q5_0) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_q5_0, XS, YS, acc, step4);
  return BQ_OK;
}

BQ_DOT_PROTO(q5_0, f32, __simd128) {
  if (n % BQ_BLK_q5_0) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / BQ_BLK_q5_0, XS, BQ_D_REG, 0, acc, weights);
  return BQ_OK;
}

/* matvec: four blocks of a row against prepared activations (same terms as step4). */
static inline v128_t pstep4(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i) {
  v128_t s[4];
  for (int b = 0; b < 4; b++) {
    v128_t lo, hi;
    bq_codes5(k, a + XS * b + XQH, a + XS * b + XQS, &lo, &hi);
    s[b] = bq_dot_i8_i16(wasm_i8x16_sub(lo, k->b16), wasm_i8x16_sub(hi, k->b16),
                         p->q + (i + b) * BQ_B32);
  }
  const v128_t si = bq_hsum4_i32(s[0], s[1], s[2], s[3]);
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = wasm_v128_load(p->d + i);
  return wasm_f32x4_mul(wasm_f32x4_mul(dx, dy), wasm_f32x4_convert_i32x4(si));
}

BQ_MATVEC_PROTO(q5_0, q8_0, __simd128) {
  return bq_matvec_prepared(w, rows, cols, x, y, XS, YS, YQS, BQ_PREP_PLAIN, pstep4,
                            bq_q5_0_dot_q8_0__simd128);
}

BQ_Q45_QUANTIZE(q5_0, XS, 0, XQH, XQS, 1, 0)
