/* Helpers shared by the SIMD128 kernels of the non-linear 4-bit formats (iq4_nl.c, iq4_xs.c,
 * mxfp4.c) and the grid decoders (iq2_xxs.c, iq2_xs.c, iq2_s.c, iq3_xxs.c, iq3_s.c, iq1_s.c,
 * iq1_m.c).
 *
 * Values are small signed integers (a 16-entry table for the 4-bit formats, grid magnitudes times
 * a sign for the grid formats), so each goes into the top byte of an i32 lane with zeros below
 * (bq_top_bytes_mul), converts exactly as value * 2^24 and is multiplied by scale * 2^-24: the same
 * real number as value * scale, so it rounds once, exactly as the reference's product. scale *
 * 2^-24 is exact wherever these kernels use it: an fp16 d (or a product of one with a small
 * integer or a power of two) is 0, at least 2^-27, Inf or NaN. */
#ifndef BQ_SIMD_IQ_H
#define BQ_SIMD_IQ_H

#include "../iquants.h"
#include "../iquants4.h"
#include "kq45.h"

/* The kernels of these files, until kernels.inc lists them (bq.h then declares them again). */
BQ_DEQUANTIZE_PROTO(iq4_nl, __simd128);
BQ_DOT_PROTO(iq4_nl, q8_0, __simd128);
BQ_DOT_PROTO(iq4_nl, f32, __simd128);
BQ_MATVEC_PROTO(iq4_nl, q8_0, __simd128);
BQ_DEQUANTIZE_PROTO(mxfp4, __simd128);
BQ_DOT_PROTO(mxfp4, q8_0, __simd128);
BQ_DOT_PROTO(mxfp4, f32, __simd128);
BQ_MATVEC_PROTO(mxfp4, q8_0, __simd128);
BQ_DEQUANTIZE_PROTO(iq4_xs, __simd128);
BQ_DOT_PROTO(iq4_xs, q8_K, __simd128);
BQ_DOT_PROTO(iq4_xs, f32, __simd128);
BQ_MATVEC_PROTO(iq4_xs, q8_K, __simd128);
BQ_DEQUANTIZE_PROTO(iq2_xxs, __simd128);
BQ_DEQUANTIZE_PROTO(iq2_xs, __simd128);
BQ_DEQUANTIZE_PROTO(iq2_s, __simd128);
BQ_DEQUANTIZE_PROTO(iq1_s, __simd128);
BQ_DEQUANTIZE_PROTO(iq1_m, __simd128);
BQ_DEQUANTIZE_PROTO(iq3_xxs, __simd128);
BQ_DEQUANTIZE_PROTO(iq3_s, __simd128);

/* The value tables as literal swizzle sources (V8 keeps a literal in a register across the loop;
 * a table loaded from memory may be re-read at each use). Checked against bq_kvalues_iq4nl and
 * bq_kvalues_mxfp4 by the tests, through the kernels' results. */
#define BQ_IQ4NL_VALUES \
  wasm_i8x16_const(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113)
#define BQ_MXFP4_VALUES wasm_i8x16_const(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12)

/* The table values of the 32 nibble codes at q (16 bytes as IQ4_NL lays them out): elements 0..15
 * (low nibbles) in *lo, 16..31 (high nibbles) in *hi, as i8. */
static inline void bq_iq4_values(const bq_k *k, v128_t table, v128_t q, v128_t *lo, v128_t *hi) {
  *lo = wasm_i8x16_swizzle(table, wasm_v128_and(q, k->nib));
  *hi = wasm_i8x16_swizzle(table, bq_hi4(k, q));
}

/* The 32 weights value * d of the codes at q into w[0..7], d24 = d * 2^-24 splat. */
static inline void bq_iq4_weights(const bq_k *k, v128_t table, const uint8_t *q, v128_t d24,
                                  v128_t w[8]) {
  v128_t lo, hi;
  bq_iq4_values(k, table, wasm_v128_load(q), &lo, &hi);
  bq_top_bytes_mul(lo, d24, w);
  bq_top_bytes_mul(hi, d24, w + 4);
}

/* Signed values of 16 elements: magnitudes g (bytes 0..127) negated where the byte mask m is all
 * ones (two's complement: (g ^ m) - m). */
static inline v128_t bq_iq_signed(v128_t g, v128_t m) {
  return wasm_i8x16_sub(wasm_v128_xor(g, m), m);
}

/* Sign masks of 32 elements from four sign bytes s (byte g: group g's 8 elements, bit j set:
 * element j negative), splat in every u32 lane of s: elements 0..15 in *m0, 16..31 in *m1. */
static inline void bq_iq_sign_masks(v128_t s, v128_t *m0, v128_t *m1) {
  const v128_t bit = wasm_i8x16_const(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  *m0 = wasm_i8x16_eq(wasm_v128_and(wasm_i8x16_swizzle(s, wasm_i8x16_const(0, 0, 0, 0, 0, 0, 0, 0,
                                                                           1, 1, 1, 1, 1, 1, 1, 1)),
                                    bit),
                      bit);
  *m1 = wasm_i8x16_eq(wasm_v128_and(wasm_i8x16_swizzle(s, wasm_i8x16_const(2, 2, 2, 2, 2, 2, 2, 2,
                                                                           3, 3, 3, 3, 3, 3, 3, 3)),
                                    bit),
                      bit);
}

/* ggml's four sign bytes of a sub-block whose u32 w holds 7-bit indices into ksigns_iq2xs. */
static inline uint32_t bq_iq_ksigns4(uint32_t w) {
  const uint8_t *ks = bq_ksigns_iq2xs;
  return (uint32_t)ks[w & 127] | (uint32_t)ks[w >> 7 & 127] << 8 |
         (uint32_t)ks[w >> 14 & 127] << 16 | (uint32_t)ks[w >> 21 & 127] << 24;
}

/* One grid sub-block: 32 magnitudes (g0: elements 0..15, g1: 16..31), its four sign bytes s
 * (splat), and the scales times 2^-24 (splat) of its halves, d0 of elements 0..15 and d1 of
 * 16..31, stored at y. */
static inline void bq_iq_grid_store2(v128_t g0, v128_t g1, v128_t s, v128_t d0, v128_t d1,
                                     float *y) {
  v128_t m0, m1, w[8];
  bq_iq_sign_masks(s, &m0, &m1);
  bq_top_bytes_mul(bq_iq_signed(g0, m0), d0, w);
  bq_top_bytes_mul(bq_iq_signed(g1, m1), d1, w + 4);
  for (int j = 0; j < 8; j++) wasm_v128_store(y + 4 * j, w[j]);
}

/* The same with one scale db * 2^-24 (splat) for all 32. */
static inline void bq_iq_grid_store(v128_t g0, v128_t g1, v128_t s, v128_t d24, float *y) {
  bq_iq_grid_store2(g0, g1, s, d24, d24, y);
}

/* The four grid rows (8 bytes each) at g + i0 .. g + i3 as two vectors: rows 0-1 in *g0, 2-3 in
 * *g1. */
static inline void bq_iq_grid_rows(const uint64_t *g, uint32_t i0, uint32_t i1, uint32_t i2,
                                   uint32_t i3, v128_t *g0, v128_t *g1) {
  *g0 = wasm_v128_load64_lane(g + i1, wasm_v128_load64_zero(g + i0), 1);
  *g1 = wasm_v128_load64_lane(g + i3, wasm_v128_load64_zero(g + i2), 1);
}

/* The IQ1 values 8 * (grid + delta) of 16 elements: grid bytes g (-1, 0, 1) times 8 by a 16-bit
 * shift with the bits carried into each odd byte masked off (an i8x16 shift is several
 * instructions in V8), plus dl (bytes +1 or -1: delta = +-1/8). Never 0, so no zero sign to
 * keep. */
static inline v128_t bq_iq1_values(v128_t g, v128_t dl) {
  return wasm_i8x16_add(wasm_v128_and(wasm_i16x8_shl(g, 3), wasm_i8x16_splat((int8_t)0xF8)), dl);
}

/* One IQ1 sub-block: grid rows g0 (elements 0..15) and g1 (16..31), delta bytes e0 and e1 (+-1)
 * of each half's groups and dl * 2^-27 (splat) of each half, stored at y: dl * (grid + delta),
 * the real number value * 2^24 times scale * 2^-27, rounded once as in the reference. */
static inline void bq_iq1_store(v128_t g0, v128_t g1, v128_t e0, v128_t e1, v128_t d0, v128_t d1,
                                float *y) {
  v128_t w[8];
  bq_top_bytes_mul(bq_iq1_values(g0, e0), d0, w);
  bq_top_bytes_mul(bq_iq1_values(g1, e1), d1, w + 4);
  for (int j = 0; j < 8; j++) wasm_v128_store(y + 4 * j, w[j]);
}

/* Two floats through the scale slots (simd.h), read back splat: a in *va, b in *vb. */
static inline void bq_iq_slot_splat2(float a, float b, v128_t *va, v128_t *vb) {
  bq_scale_slot[0] = bq_bits(a);
  bq_scale_slot[1] = bq_bits(b);
  *va = wasm_v128_load32_splat(bq_scale_slot_alias);
  *vb = wasm_v128_load32_splat(bq_scale_slot_alias + 1);
}

/* The first code whose value times d is nearest x, for four lanes, as the reference's
 * bq_fp4_best_code over all 16 codes (MXFP4 and NVFP4). The table is 0 and +-(1, 2, 3, 4, 6, 8,
 * 12): for x > 0 no negative value (nor code 8, which ties code 0) is strictly nearer than code 0,
 * and for x < 0 no positive one, while
 * |(-v) * d - x| is |v * d - |x|| exactly (negation and a - b = -(b - a) are exact). So the search
 * runs over codes 0..7 against |x|, in order with strict <, and a negative x takes code + 8 (code 0
 * stays 0: -0 and NaN give code 0 as in the reference). c[j] = kvalues[j] * d, exact. */
static inline v128_t bq_fp4_best_codes(const v128_t *c, v128_t x) {
  const v128_t a = wasm_f32x4_abs(x);
  v128_t best = wasm_i32x4_splat(0), err = a;
  for (int j = 1; j < 8; j++) {
    const v128_t e = wasm_f32x4_abs(wasm_f32x4_sub(c[j], a));
    const v128_t m = wasm_f32x4_lt(e, err);
    best = wasm_v128_bitselect(wasm_i32x4_splat(j), best, m);
    err = wasm_v128_bitselect(e, err, m);
  }
  const v128_t neg = wasm_v128_and(wasm_f32x4_lt(x, wasm_f32x4_splat(0.0f)),
                                   wasm_i32x4_ne(best, wasm_i32x4_splat(0)));
  return wasm_v128_or(best, wasm_v128_and(neg, wasm_i32x4_splat(8)));
}

/* The 16 codes of 16 consecutive values, one byte each. */
static inline v128_t bq_fp4_codes16(const v128_t *c, const float *x) {
  v128_t q[4];
  for (int k = 0; k < 4; k++) q[k] = bq_fp4_best_codes(c, wasm_v128_load(x + 4 * k));
  return wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q[0], q[1]),
                                 wasm_i16x8_narrow_i32x4(q[2], q[3]));
}

/* A float through the scale slot (simd.h): stored as bits, read back splat by one load. */
static inline v128_t bq_iq_slot_splat(float f) {
  bq_scale_slot[0] = bq_bits(f);
  return wasm_v128_load32_splat(bq_scale_slot_alias);
}

#endif
