/* Q4_1 SIMD128 kernels; same results as ref/q4_1.c (dot: same per-block terms, 4-lane sum). */
#include "q45.h"

/* The 32 weights q * d + m of the block at p, as 8 vectors: low and high nibbles as bytes, each
 * swizzled into the low byte of an i32 lane and converted (bq_low_bytes_mul_add). */
static inline void weights(const bq_k *k, const uint8_t *p, v128_t d, v128_t m, v128_t w[8]) {
  const v128_t q = wasm_v128_load(p + 4);
  bq_low_bytes_mul_add(wasm_v128_and(q, k->nib), d, m, w);
  bq_low_bytes_mul_add(bq_hi4(k, q), d, m, w + 4);
}

BQ_DEQUANTIZE_PROTO(q4_1, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dequantize_blocks(x, y, n / QK, 20, BQ_DM_SLOT, 0, weights);
  return BQ_OK;
}

static inline v128_t isum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t q = wasm_v128_load(a + 4);
  const v128_t lo = wasm_v128_and(q, k->nib), hi = bq_hi4(k, q);
  return bq_dot_i8x32(lo, hi, wasm_v128_load(b + 4), wasm_v128_load(b + 20));
}

/* Terms (dx * dy) * sumi + mx * sy of four blocks. */
static inline v128_t step4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(k, a, b), isum(k, a + 20, b + 36), isum(k, a + 40, b + 72),
                                 isum(k, a + 60, b + 108));
  v128_t dy, sy;
  bq_q8_1_ds(k, b, &dy, &sy);
  return bq_terms_dm(k, a, 20, dy, sy, si);
}

BQ_DOT_PROTO(q4_1, q8_1, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot4(x, y, n / QK, 20, 36, acc, step4);
  return BQ_OK;
}

BQ_DOT_PROTO(q4_1, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / QK, 20, BQ_DM_SLOT, 0, acc, weights);
  return BQ_OK;
}

/* matvec: four blocks of a row against prepared activations (same terms as step4). */
static inline v128_t pstep4(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i) {
  v128_t s[4];
  /* Not unrolled: V8 hoists the loads of unrolled copies and then spills (15-40% slower). */
#pragma clang loop unroll(disable)
  for (int b = 0; b < 4; b++)
    s[b] = bq_dot_nib_i16(k, wasm_v128_load(a + 20 * b + 4), p->q + (i + b) * QK);
  const v128_t si = bq_hsum4_i32(s[0], s[1], s[2], s[3]);
  return bq_terms_dm(k, a, 20, wasm_v128_load(p->d + i), wasm_v128_load(p->s + i), si);
}

BQ_MATVEC_PROTO(q4_1, q8_1, __simd128) {
  return bq_matvec_prepared(w, rows, cols, x, y, 20, 36, 4, BQ_PREP_NIBBLES, pstep4,
                            bq_q4_1_dot_q8_1__simd128);
}

BQ_Q45_QUANTIZE(q4_1, 20, 0, 1)
