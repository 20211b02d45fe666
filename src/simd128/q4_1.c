/* Q4_1 SIMD128 kernels; same results as ref/q4_1.c (dot: same per-block terms, 4-lane sum). */
#include "q45.h"

/* This file's block geometry (internal.h): XS/YS bytes per weight/activation block, X<field> the
 * offsets of the weight block's fields, YQS of the activation codes. */
enum {
  XS = sizeof(block_q4_1),
  YS = sizeof(block_q8_1),
  XM = offsetof(block_q4_1, m),
  XQS = offsetof(block_q4_1, qs),
  YQS = offsetof(block_q8_1, qs)
};
static_assert(BQ_BLK_q4_1 == BQ_B32 && BQ_BLK_q8_1 == BQ_B32, "the helpers take 32-value blocks");

/* The 32 weights q * d + m of the block at p, as 8 vectors: low and high nibbles as bytes, each
 * swizzled into the low byte of an i32 lane and converted (bq_low_bytes_mul_add). */
static inline void weights(const bq_k *k, const uint8_t *p, v128_t d, v128_t m, v128_t w[8]) {
  const v128_t q = wasm_v128_load(p + XQS);
  bq_low_bytes_mul_add(wasm_v128_and(q, k->nib), d, m, w);
  bq_low_bytes_mul_add(bq_hi4(k, q), d, m, w + 4);
}

BQ_DEQUANTIZE_PROTO(q4_1, __simd128) {
  if (n % BQ_BLK_q4_1) return BQ_EINVAL;
  bq_dequantize_blocks(x, y, n / BQ_BLK_q4_1, XS, BQ_DM_SLOT, 0, weights);
  return BQ_OK;
}

static inline v128_t isum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t q = wasm_v128_load(a + XQS);
  const v128_t lo = wasm_v128_and(q, k->nib), hi = bq_hi4(k, q);
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

BQ_DOT_PROTO(q4_1, q8_1, __simd128) {
  if (n % BQ_BLK_q4_1) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_q4_1, XS, YS, acc, step4);
  return BQ_OK;
}

BQ_DOT_PROTO(q4_1, f32, __simd128) {
  if (n % BQ_BLK_q4_1) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / BQ_BLK_q4_1, XS, BQ_DM_SLOT, 0, acc, weights);
  return BQ_OK;
}

/* matvec: four blocks of a row against prepared activations (same terms as step4). */
static inline v128_t pstep4(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i) {
  v128_t s[4];
  /* Not unrolled: V8 hoists the loads of unrolled copies and then spills (15-40% slower). */
#pragma clang loop unroll(disable)
  for (int b = 0; b < 4; b++)
    s[b] = bq_dot_nib_i16(k, wasm_v128_load(a + XS * b + XQS), p->q + (i + b) * BQ_B32);
  const v128_t si = bq_hsum4_i32(s[0], s[1], s[2], s[3]);
  return bq_terms_dm(k, a, XS, wasm_v128_load(p->d + i), wasm_v128_load(p->s + i), si);
}

BQ_MATVEC_PROTO(q4_1, q8_1, __simd128) {
  return bq_matvec_prepared(w, rows, cols, x, y, XS, YS, YQS, BQ_PREP_NIBBLES, pstep4,
                            bq_q4_1_dot_q8_1__simd128);
}

BQ_Q45_QUANTIZE(q4_1, XS, XM, 0, XQS, 0, 1)
