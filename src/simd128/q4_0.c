/* Q4_0 SIMD128 kernels; same results as ref/q4_0.c (dot: same per-block terms, 4-lane sum). */
#include "q45.h"

/* This file's block geometry (internal.h): XS/YS bytes per weight/activation block, X<field> the
 * offsets of the weight block's fields, YQS of the activation codes. */
enum {
  XS = sizeof(block_q4_0),
  YS = sizeof(block_q8_0),
  XQS = offsetof(block_q4_0, qs),
  YQS = offsetof(block_q8_0, qs)
};
static_assert(BQ_BLK_q4_0 == BQ_B32 && BQ_BLK_q8_0 == BQ_B32, "the helpers take 32-value blocks");

/* The 32 weights (q - 8) * d of the block at p, as 8 vectors (low nibbles are elements 0..15).
 * After flipping bit 3 of every nibble, the nibble placed in the top 4 bits of an
 * i32 lane is (q - 8) * 2^28 as a signed value. Each byte (low nibbles shifted up, high ones
 * masked) goes to the top byte of its lane by a swizzle with zeros below (index 0x80), is
 * converted exactly and multiplied by d * 2^-28 (exact: d >= 2^-24), which rounds like
 * (q - 8) * d. One shuffle, convert and multiply per 4 weights. */
static inline void weights(const bq_k *k, const uint8_t *p, v128_t d28, v128_t m, v128_t w[8]) {
  (void)m;
  const v128_t x = wasm_v128_xor(wasm_v128_load(p + XQS), k->flip8);
  bq_top_bytes_mul(wasm_v128_and(wasm_i16x8_shl(x, 4), k->hi_nib), d28, w);
  bq_top_bytes_mul(wasm_v128_and(x, k->hi_nib), d28, w + 4);
}

BQ_DEQUANTIZE_PROTO(q4_0, __simd128) {
  if (n % BQ_BLK_q4_0) return BQ_EINVAL;
  bq_dequantize_blocks(x, y, n / BQ_BLK_q4_0, XS, BQ_D_SLOT, -28, weights); /* d * 2^-28 */
  return BQ_OK;
}

static inline v128_t isum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t q = wasm_v128_load(a + XQS);
  const v128_t lo = wasm_i8x16_sub(wasm_v128_and(q, k->nib), k->b8);
  const v128_t hi = wasm_i8x16_sub(bq_hi4(k, q), k->b8);
  return bq_dot_i8x32(lo, hi, wasm_v128_load(b + YQS), wasm_v128_load(b + YQS + 16));
}

/* Terms ((float)sumi * dx) * dy of four blocks. */
static inline v128_t step4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(k, a, b), isum(k, a + XS, b + YS),
                                 isum(k, a + 2 * XS, b + 2 * YS), isum(k, a + 3 * XS, b + 3 * YS));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = bq_h2f_x4(k, bq_load_u16x4(b, YS));
  return wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), dx), dy);
}

BQ_DOT_PROTO(q4_0, q8_0, __simd128) {
  if (n % BQ_BLK_q4_0) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_q4_0, XS, YS, acc, step4);
  return BQ_OK;
}

BQ_DOT_PROTO(q4_0, f32, __simd128) {
  if (n % BQ_BLK_q4_0) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / BQ_BLK_q4_0, XS, BQ_D_SLOT, -28, acc, weights);
  return BQ_OK;
}

/* matvec: four blocks of a row against prepared activations (same terms as step4). */
static inline v128_t pstep4(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i) {
  v128_t s[4];
  /* Not unrolled: V8 hoists the loads of unrolled copies and then spills (15-40% slower). */
#pragma clang loop unroll(disable)
  for (int b = 0; b < 4; b++)
    s[b] = bq_dot_nib_i16(k, wasm_v128_load(a + XS * b + XQS), p->q + (i + b) * BQ_B32);
  /* sum (q - 8) a = sum q a - 8 sum a, exactly */
  const v128_t si = wasm_i32x4_sub(bq_hsum4_i32(s[0], s[1], s[2], s[3]),
                                   wasm_i32x4_shl(wasm_v128_load(p->sum + i), 3));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS)), dy = wasm_v128_load(p->d + i);
  return wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), dx), dy);
}

BQ_MATVEC_PROTO(q4_0, q8_0, __simd128) {
  return bq_matvec_prepared(w, rows, cols, x, y, XS, YS, YQS, BQ_PREP_NIBBLES, pstep4,
                            bq_q4_0_dot_q8_0__simd128);
}

BQ_Q45_QUANTIZE(q4_0, XS, 0, 0, XQS, 0, 0)
