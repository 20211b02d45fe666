/* Q5_1 SIMD128 kernels; same results as ref/q5_1.c (dot: same per-block terms, 4-lane sum). */
#include "q45.h"

/* This file's block geometry (internal.h): XS/YS bytes per weight/activation block, X<field> the
 * offsets of the weight block's fields, YQS of the activation codes. */
enum {
  XS = sizeof(block_q5_1),
  YS = sizeof(block_q8_1),
  XM = offsetof(block_q5_1, m),
  XQH = offsetof(block_q5_1, qh),
  XQS = offsetof(block_q5_1, qs),
  YQS = offsetof(block_q8_1, qs)
};
static_assert(BQ_BLK_q5_1 == BQ_B32 && BQ_BLK_q8_1 == BQ_B32, "the helpers take 32-value blocks");

/* The 32 weights q * d + m of the block at p, as 8 vectors: the 5-bit codes assembled as bytes,
 * each swizzled into the low byte of an i32 lane and converted (bq_low_bytes_mul_add). */
static inline void weights(const bq_k *k, const uint8_t *p, v128_t d, v128_t m, v128_t w[8]) {
  v128_t lo, hi;
  bq_codes5(k, p + XQH, p + XQS, &lo, &hi);
  bq_low_bytes_mul_add(lo, d, m, w);
  bq_low_bytes_mul_add(hi, d, m, w + 4);
}

BQ_DEQUANTIZE_PROTO(q5_1, __simd128) {
  if (n % BQ_BLK_q5_1) return BQ_EINVAL;
  bq_dequantize_blocks(x, y, n / BQ_BLK_q5_1, XS, BQ_DM_SLOT, 0, weights);
  return BQ_OK;
}

static inline v128_t isum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  bq_codes5(k, a + XQH, a + XQS, &lo, &hi);
  return bq_dot_i8x32(lo, hi, wasm_v128_load(b + YQS), wasm_v128_load(b + YQS + 16));
}

/* Terms (dx * dy) * sumi + mx * sy of four blocks. */
static inline v128_t step4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(k, a, b), isum(k, a + XS, b + YS),
                                 isum(k, a + 2 * XS, b + 2 * YS), isum(k, a + 3 * XS, b + 3 * YS));
  v128_t dy, sy;
  bq_q8_1_ds(k, b, &dy, &sy);
  return bq_terms_dm(k, a, XS, dy, sy, si);
}

BQ_DOT_PROTO(q5_1, q8_1, __simd128) {
  if (n % BQ_BLK_q5_1) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_q5_1, XS, YS, acc, step4);
  return BQ_OK;
}

BQ_DOT_PROTO(q5_1, f32, __simd128) {
  if (n % BQ_BLK_q5_1) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / BQ_BLK_q5_1, XS, BQ_DM_SLOT, 0, acc, weights);
  return BQ_OK;
}

/* matvec: four blocks of a row against prepared activations (same terms as step4). */
static inline v128_t pstep4(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i) {
  v128_t s[4];
  for (int b = 0; b < 4; b++) {
    v128_t lo, hi;
    bq_codes5(k, a + XS * b + XQH, a + XS * b + XQS, &lo, &hi);
    s[b] = bq_dot_i8_i16(lo, hi, p->q + (i + b) * BQ_B32);
  }
  const v128_t si = bq_hsum4_i32(s[0], s[1], s[2], s[3]);
  return bq_terms_dm(k, a, XS, wasm_v128_load(p->d + i), wasm_v128_load(p->s + i), si);
}

BQ_MATVEC_PROTO(q5_1, q8_1, __simd128) {
  return bq_matvec_prepared(w, rows, cols, x, y, XS, YS, YQS, BQ_PREP_PLAIN, pstep4,
                            bq_q5_1_dot_q8_1__simd128);
}

BQ_Q45_QUANTIZE(q5_1, XS, XM, XQH, XQS, 1, 1)
