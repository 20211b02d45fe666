/* F16 SIMD128 kernels; same results as ref/f16.c (dot: same products, 4-lane sum). */
#include "simd.h"

BQ_QUANTIZE_PROTO(f16, __simd128) {
  const bq_k k = bq_consts();
  uint8_t *o = y;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t h0 = bq_f2h_x4(&k, wasm_v128_load(x + i)),
                 h1 = bq_f2h_x4(&k, wasm_v128_load(x + i + 4));
    wasm_v128_store(o + 2 * i,
                    wasm_u16x8_narrow_i32x4(h0, h1)); /* lanes <= 0xFFFF: no saturation */
  }
  for (; i < n; i++) bq_wr16(o + 2 * i, bq_fp32_to_fp16(x[i]));
  return BQ_OK;
}

/* This file's vector constants, in memory for the reason consts.c gives. */
struct {
  uint16_t off[8], lim[8], mask[8];
  uint32_t mag[4], exp1[4];
} bq_f16_consts = {
    {0x8800, 0x8800, 0x8800, 0x8800, 0x8800, 0x8800, 0x8800, 0x8800},
    {0x9000, 0x9000, 0x9000, 0x9000, 0x9000, 0x9000, 0x9000, 0x9000},
    {0x8FFF, 0x8FFF, 0x8FFF, 0x8FFF, 0x8FFF, 0x8FFF, 0x8FFF, 0x8FFF}, /* sign, exponent, 4 bits */
    {0x0FFFE000, 0x0FFFE000, 0x0FFFE000, 0x0FFFE000}, /* exponent, mantissa after the shift */
    {0x00800000, 0x00800000, 0x00800000, 0x00800000}, /* exponent 1 */
};

/* 16 halves (h0: elements 0-7, h1: 8-15), all with exponents 1..30, -> f32 at y. The float with
 * the half's sign, exponent and mantissa bits in place is the half times 2^-112, a normal float,
 * and one multiply by 2^112 finishes it exactly. Its top 16 bits are the half shifted right by 3,
 * sign kept (an arithmetic shift, then bits 12-14 cleared), its low 16 bits the half shifted left
 * by 13; 16-bit interleaves join them. */
static inline void h2f_normal16(const bq_k *k, v128_t mask, v128_t h0, v128_t h1, float *y) {
  const v128_t t0 = wasm_v128_and(wasm_i16x8_shr(h0, 3), mask), b0 = wasm_i16x8_shl(h0, 13);
  const v128_t t1 = wasm_v128_and(wasm_i16x8_shr(h1, 3), mask), b1 = wasm_i16x8_shl(h1, 13);
  const v128_t w[4] = {wasm_i16x8_shuffle(b0, t0, 0, 8, 1, 9, 2, 10, 3, 11),
                       wasm_i16x8_shuffle(b0, t0, 4, 12, 5, 13, 6, 14, 7, 15),
                       wasm_i16x8_shuffle(b1, t1, 0, 8, 1, 9, 2, 10, 3, 11),
                       wasm_i16x8_shuffle(b1, t1, 4, 12, 5, 13, 6, 14, 7, 15)};
  for (int j = 0; j < 4; j++) {
    wasm_v128_store(y + 4 * j, wasm_f32x4_mul(w[j], k->x112));
    BQ_STORE_ORDER();
  }
}

/* Any half in the top half of each u32 lane (the low half is ignored) -> f32, exactly as
 * bq_fp16_to_fp32, with no subnormal float operand or result (bq_h2f_fast says why): the
 * magnitude bits a are placed as in bq_h2f_top, whose exponent 31 is made 255 as there, and
 * exponent 0 is made 1, so that a * 2^112 is the half plus 2^-14, from which 2^-14 is subtracted
 * (exactly). The sign goes on last, so a negative zero stays negative. */
static inline v128_t h2f_any_top(const bq_k *k, v128_t mag, v128_t exp1, v128_t v) {
  const v128_t a = wasm_v128_and(wasm_u32x4_shr(v, 3), mag);
  const v128_t e = wasm_v128_and(a, k->hexp);
  const v128_t e0 = wasm_i32x4_eq(e, wasm_i32x4_splat(0)), e31 = wasm_i32x4_eq(e, k->hexp);
  const v128_t fill = wasm_v128_or(wasm_u32x4_min(e31, k->hfill), wasm_u32x4_min(e0, exp1));
  const v128_t f = wasm_f32x4_sub(wasm_f32x4_mul(wasm_v128_or(a, fill), k->x112),
                                  wasm_u32x4_min(e0, k->min_normal16));
  return wasm_v128_or(f, wasm_v128_and(v, k->signbit));
}

/* 16 halves of any kind -> f32 at y, each doubled into a u32 lane (so it is in the top half). */
static inline void h2f_any16(const bq_k *k, v128_t h0, v128_t h1, float *y) {
  const v128_t mag = wasm_v128_load(bq_f16_consts.mag), exp1 = wasm_v128_load(bq_f16_consts.exp1);
  const v128_t w[4] = {wasm_i16x8_shuffle(h0, h0, 0, 0, 1, 1, 2, 2, 3, 3),
                       wasm_i16x8_shuffle(h0, h0, 4, 4, 5, 5, 6, 6, 7, 7),
                       wasm_i16x8_shuffle(h1, h1, 0, 0, 1, 1, 2, 2, 3, 3),
                       wasm_i16x8_shuffle(h1, h1, 4, 4, 5, 5, 6, 6, 7, 7)};
  for (int j = 0; j < 4; j++) {
    wasm_v128_store(y + 4 * j, h2f_any_top(k, mag, exp1, w[j]));
    BQ_STORE_ORDER();
  }
}

/* Groups of 16 halves: those with only normal exponents take h2f_normal16 (about 5 operations per
 * 4 values with the test, where bq_h2f_top takes 8), others h2f_any16 (15). The test: 2h + 0x8800
 * as an i16 (wrapping) is below 0x9000 exactly when h has exponent 0 or 31. bq_h2f_top alone was
 * 17% slower on the benchmark's weights (1% of their groups of 4 hold a subnormal half) than on
 * the same weights with the subnormals made normal, at 64K weights. Paired rounds against it
 * (3 instances each, weights/ns): 64K 4.57 -> 6.02, 4.17 -> 5.65, 3.90 -> 4.67, 4.08 -> 4.77,
 * 4.22 -> 5.38 (0.30-0.33 -> 0.35-0.43 of the ceiling); 16M alike (0.60-0.65 -> 0.61-0.69: memory
 * bound). No input touch (bq_touch), unlike the block formats: runs of 512 weights (16 lines) gave
 * -0.02 to +0.06 of the ceiling at 16M and were 8-10% slower at 64K; 256 and 1024 no better,
 * 2048 much slower (0.51 against 0.63). The same for bf16 (simd128/bf16.c, left as it was): +0.01
 * at 16M, 10-20% slower at 64K with 512. */
BQ_DEQUANTIZE_PROTO(f16, __simd128) {
  const bq_k k = bq_consts();
  const v128_t off = wasm_v128_load(bq_f16_consts.off), lim = wasm_v128_load(bq_f16_consts.lim),
               mask = wasm_v128_load(bq_f16_consts.mask);
  const uint8_t *p = x;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t h0 = wasm_v128_load(p + 2 * i), h1 = wasm_v128_load(p + 2 * i + 16);
    const v128_t s = wasm_i16x8_min(wasm_i16x8_add(wasm_i16x8_add(h0, h0), off),
                                    wasm_i16x8_add(wasm_i16x8_add(h1, h1), off));
    if (!wasm_v128_any_true(wasm_i16x8_lt(s, lim)))
      h2f_normal16(&k, mask, h0, h1, y + i);
    else
      h2f_any16(&k, h0, h1, y + i);
  }
  for (; i < n; i++) y[i] = bq_fp16_to_fp32(bq_rd16(p + 2 * i));
  return BQ_OK;
}

#define LOAD_F16(p) bq_h2f_x4(&k, wasm_u32x4_load16x4(p))

BQ_DOT_PROTO(f16, f32, __simd128) { BQ_DOT_FLOAT(2, LOAD_F16) }
