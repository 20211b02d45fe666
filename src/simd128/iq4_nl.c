/* IQ4_NL SIMD128 kernels: dequantize bit-exact with ref/iq4_nl.c; dot with Q8_0 from the same
 * exact integer block sums and per-block terms (dx * dy) * sumi, summed in 4 lanes (groups of 4
 * blocks, as the Q4_0 dot). The 16-entry table is one swizzle (iq.h). */
#include "iq.h"

enum {
  XS = sizeof(block_iq4_nl),
  YS = sizeof(block_q8_0),
  XQS = offsetof(block_iq4_nl, qs),
  YQS = offsetof(block_q8_0, qs)
};
static_assert(BQ_BLK_iq4_nl == BQ_B32 && offsetof(block_iq4_nl, d) == 0, "32 values, d first");
static_assert(sizeof(block_iq4_nl) <= BQ_B32_MAX_BYTES, "fits the helpers' padded groups");

/* The 32 weights of the block at p; d24 = d * 2^-24 (iq.h). */
static inline void weights(const bq_k *k, const uint8_t *p, v128_t d24, v128_t m, v128_t w[8]) {
  (void)m;
  bq_iq4_weights(k, BQ_IQ4NL_VALUES, p + XQS, d24, w);
}

BQ_DEQUANTIZE_PROTO(iq4_nl, __simd128) {
  if (n % BQ_BLK_iq4_nl) return BQ_EINVAL;
  bq_dequantize_blocks(x, y, n / BQ_BLK_iq4_nl, XS, BQ_D_SLOT, -24, weights);
  return BQ_OK;
}

BQ_DOT_PROTO(iq4_nl, f32, __simd128) {
  if (n % BQ_BLK_iq4_nl) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / BQ_BLK_iq4_nl, XS, BQ_D_SLOT, -24, acc, weights);
  return BQ_OK;
}

static inline v128_t isum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  bq_iq4_values(k, BQ_IQ4NL_VALUES, wasm_v128_load(a + XQS), &lo, &hi);
  return bq_dot_i8x32(lo, hi, wasm_v128_load(b + YQS), wasm_v128_load(b + YQS + 16));
}

/* Terms (dx * dy) * sumi of four blocks (ggml: (yd * xd) * sumi, the same product). */
static inline v128_t terms(const bq_k *k, const uint8_t *a, v128_t si, v128_t dy) {
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, XS));
  return wasm_f32x4_mul(wasm_f32x4_mul(dx, dy), wasm_f32x4_convert_i32x4(si));
}

static inline v128_t step4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(k, a, b), isum(k, a + XS, b + YS),
                                 isum(k, a + 2 * XS, b + 2 * YS), isum(k, a + 3 * XS, b + 3 * YS));
  return terms(k, a, si, bq_h2f_x4(k, bq_load_u16x4(b, YS)));
}

BQ_DOT_PROTO(iq4_nl, q8_0, __simd128) {
  if (n % BQ_BLK_iq4_nl) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_iq4_nl, XS, YS, acc, step4);
  return BQ_OK;
}

/* matvec: four blocks of a row against activations prepared once (int16 codes, d as floats,
 * converted as step4 converts them), so each row's terms are step4's. */
static inline v128_t pstep4(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i) {
  v128_t s[4];
  /* Not unrolled: V8 hoists the loads of unrolled copies and then spills. */
#pragma clang loop unroll(disable)
  for (int b = 0; b < 4; b++) {
    v128_t lo, hi;
    bq_iq4_values(k, BQ_IQ4NL_VALUES, wasm_v128_load(a + XS * b + XQS), &lo, &hi);
    s[b] = bq_dot_i8_i16(lo, hi, p->q + (i + b) * BQ_B32);
  }
  return terms(k, a, bq_hsum4_i32(s[0], s[1], s[2], s[3]), wasm_v128_load(p->d + i));
}

BQ_MATVEC_PROTO(iq4_nl, q8_0, __simd128) {
  return bq_matvec_prepared(w, rows, cols, x, y, XS, YS, YQS, BQ_PREP_PLAIN, pstep4,
                            bq_iq4_nl_dot_q8_0__simd128);
}
