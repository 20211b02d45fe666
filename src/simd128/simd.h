/* Helpers shared by the SIMD128 kernels. Conversions avoid integer->float converts of widened
 * bytes: clang 14 turns an i8 -> i16 -> i32 -> f32 chain into per-lane scalar code. Small
 * non-negative integers are turned into floats by placing them in the mantissa of 2^23 instead
 * (the bits 0x4B0000xx are the float 2^23 + xx), then subtracting 2^23 plus any offset, which is
 * exact. */
#ifndef BQ_SIMD_H
#define BQ_SIMD_H

#include <wasm_simd128.h>

#include "../internal.h"

#define BQ_MAGIC 8388608.0f /* 2^23 */

/* Lanes 4k..4k+3 of the bytes of v, as floats 2^23 + byte. The shuffle takes byte 16 (0) and 17
 * (0x4B) from the constant to fill each i32 lane as [b, 0, 0, 0x4B]. */
#define BQ_U8_MAGIC(v, k)                                                                  \
  wasm_i8x16_shuffle((v), wasm_i8x16_const(0, 0x4B, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), \
                     4 * (k), 16, 16, 17, 4 * (k) + 1, 16, 16, 17, 4 * (k) + 2, 16, 16, 17,    \
                     4 * (k) + 3, 16, 16, 17)

/* Store the 16 bytes of v (codes 0..255) as 16 floats (code - off) * d [+ m]. */
static inline void bq_store16_scaled(float *y, v128_t v, float off, v128_t d) {
  const v128_t k = wasm_f32x4_splat(BQ_MAGIC + off);
  wasm_v128_store(y + 0, wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 0), k), d));
  wasm_v128_store(y + 4, wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 1), k), d));
  wasm_v128_store(y + 8, wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 2), k), d));
  wasm_v128_store(y + 12, wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 3), k), d));
}

static inline void bq_store16_affine(float *y, v128_t v, v128_t d, v128_t m) {
  const v128_t k = wasm_f32x4_splat(BQ_MAGIC);
  wasm_v128_store(y + 0, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 0), k), d), m));
  wasm_v128_store(y + 4, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 1), k), d), m));
  wasm_v128_store(y + 8, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 2), k), d), m));
  wasm_v128_store(y + 12, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 3), k), d), m));
}

/* The 16 floats (code - off) * d [+ m] of v, as 4 vectors, for the fused f32 dots. */
static inline void bq_expand16(v128_t out[4], v128_t v, float off, v128_t d) {
  const v128_t k = wasm_f32x4_splat(BQ_MAGIC + off);
  out[0] = wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 0), k), d);
  out[1] = wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 1), k), d);
  out[2] = wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 2), k), d);
  out[3] = wasm_f32x4_mul(wasm_f32x4_sub(BQ_U8_MAGIC(v, 3), k), d);
}

/* binary16 bits in the low half of each u32 lane -> f32, exactly as bq_fp16_to_fp32. Placing the
 * 15 magnitude bits at bit 13 gives a float 2^-112 times the half (normal or subnormal), so one
 * exact multiply by 2^112 finishes it; exponent 31 (Inf, NaN) is rebuilt with bits instead. */
static inline v128_t bq_h2f_x4(v128_t h) {
  const v128_t em = wasm_v128_and(h, wasm_i32x4_splat(0x7FFF));
  const v128_t sign = wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16);
  const v128_t sh = wasm_i32x4_shl(em, 13);
  const v128_t f = wasm_f32x4_mul(sh, wasm_f32x4_splat(0x1p112f));
  const v128_t special = wasm_v128_or(
      wasm_v128_or(sh, wasm_i32x4_splat(0x7F800000)),
      wasm_v128_and(wasm_i32x4_gt(em, wasm_i32x4_splat(0x7C00)), wasm_i32x4_splat(0x400000)));
  const v128_t r = wasm_v128_bitselect(special, f, wasm_i32x4_ge(em, wasm_i32x4_splat(0x7C00)));
  return wasm_v128_or(r, sign);
}

/* The same for one value, without the subnormal loop of the scalar reference. */
static inline float bq_h2f_fast(uint16_t h) {
  const uint32_t em = h & 0x7FFF;
  float f = bq_float(em << 13) * 0x1p112f;
  if (em >= 0x7C00) f = bq_float(0x7F800000 | (em << 13) | (em > 0x7C00 ? 0x400000 : 0));
  return bq_float(bq_bits(f) | ((uint32_t)(h & 0x8000) << 16));
}

/* f32 -> binary16 bits in the low half of each u32 lane, exactly as bq_fp32_to_fp16: integer
 * rounding for normal halves, and for subnormal ones |f| * 2^24 (exact) rounded to nearest even
 * by f32x4.nearest. */
static inline v128_t bq_f2h_x4(v128_t f) {
  const v128_t ax = wasm_v128_and(f, wasm_i32x4_splat(0x7FFFFFFF));
  const v128_t sign = wasm_u32x4_shr(wasm_v128_and(f, wasm_i32x4_splat((int32_t)0x80000000)), 16);
  v128_t r = wasm_i32x4_sub(ax, wasm_i32x4_splat(0x38000000));
  r = wasm_i32x4_add(r, wasm_i32x4_add(wasm_i32x4_splat(0x0FFF),
                                       wasm_v128_and(wasm_u32x4_shr(r, 13), wasm_i32x4_splat(1))));
  const v128_t normal = wasm_u32x4_shr(r, 13);
  const v128_t sub =
      wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(ax, wasm_f32x4_splat(0x1p24f))));
  v128_t h = wasm_v128_bitselect(sub, normal, wasm_i32x4_lt(ax, wasm_i32x4_splat(0x38800000)));
  h = wasm_v128_bitselect(wasm_i32x4_splat(0x7C00), h, wasm_i32x4_ge(ax, wasm_i32x4_splat(0x47800000)));
  h = wasm_v128_bitselect(wasm_i32x4_splat(0x7E00), h, wasm_i32x4_gt(ax, wasm_i32x4_splat(0x7F800000)));
  return wasm_v128_or(h, sign);
}

/* The 16-bit fields at p, p + stride, p + 2 stride, p + 3 stride, zero-extended into u32 lanes. */
static inline v128_t bq_load_u16x4(const uint8_t *p, size_t stride) {
  v128_t v = wasm_i32x4_splat(0);
  v = wasm_v128_load16_lane(p, v, 0);
  v = wasm_v128_load16_lane(p + stride, v, 2);
  v = wasm_v128_load16_lane(p + 2 * stride, v, 4);
  v = wasm_v128_load16_lane(p + 3 * stride, v, 6);
  return v;
}

/* The 32-bit fields at p + k * stride, k = 0..3. */
static inline v128_t bq_load_u32x4(const uint8_t *p, size_t stride) {
  v128_t v = wasm_v128_load32_zero(p);
  v = wasm_v128_load32_lane(p + stride, v, 1);
  v = wasm_v128_load32_lane(p + 2 * stride, v, 2);
  v = wasm_v128_load32_lane(p + 3 * stride, v, 3);
  return v;
}

/* [sum(a), sum(b), sum(c), sum(d)] of four i32x4 (exact, shuffles only). */
static inline v128_t bq_hsum4_i32(v128_t a, v128_t b, v128_t c, v128_t d) {
  const v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
  const v128_t cd = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
}

/* [max(a), max(b), max(c), max(d)] of four f32x4 without NaN. */
static inline v128_t bq_hmax4_f32(v128_t a, v128_t b, v128_t c, v128_t d) {
  const v128_t ab = wasm_f32x4_max(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
  const v128_t cd = wasm_f32x4_max(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
  return wasm_f32x4_max(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
}

/* Sum over lanes of the products of i8x16 pairs (a0, b0) and (a1, b1), as i32x4 partial sums. */
static inline v128_t bq_dot_i8x32(v128_t a0, v128_t a1, v128_t b0, v128_t b1) {
  v128_t p = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a0), wasm_i16x8_extend_low_i8x16(b0));
  p = wasm_i32x4_add(p, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a0), wasm_i16x8_extend_high_i8x16(b0)));
  p = wasm_i32x4_add(p, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a1), wasm_i16x8_extend_low_i8x16(b1)));
  p = wasm_i32x4_add(p, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a1), wasm_i16x8_extend_high_i8x16(b1)));
  return p;
}

/* Masks (0xFF / 0x00) of the 5th bits of elements 0..15 and 16..31, from the 32-bit qh at p. */
static inline void bq_qh_masks(const uint8_t *p, v128_t *lo, v128_t *hi) {
  const v128_t v = wasm_v128_load32_zero(p);
  const v128_t bit = wasm_u8x16_const(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128);
  const v128_t l = wasm_i8x16_shuffle(v, v, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const v128_t h = wasm_i8x16_shuffle(v, v, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  *lo = wasm_i8x16_eq(wasm_v128_and(l, bit), bit);
  *hi = wasm_i8x16_eq(wasm_v128_and(h, bit), bit);
}

/* Codes 0..31 of elements 0..15 (lo) and 16..31 (hi) of the Q5 block whose qh is at h, qs at s. */
static inline void bq_codes5(const uint8_t *h, const uint8_t *s, v128_t *lo, v128_t *hi) {
  v128_t ml, mh;
  bq_qh_masks(h, &ml, &mh);
  const v128_t q = wasm_v128_load(s), b4 = wasm_i8x16_splat(0x10);
  *lo = wasm_v128_or(wasm_v128_and(q, wasm_i8x16_splat(0x0F)), wasm_v128_and(ml, b4));
  *hi = wasm_v128_or(wasm_u8x16_shr(q, 4), wasm_v128_and(mh, b4));
}

/* Sum of a tree of 8 product vectors, in a fixed order. */
static inline v128_t bq_sum8(const v128_t p[8]) {
  return wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(p[0], p[1]), wasm_f32x4_add(p[2], p[3])),
                        wasm_f32x4_add(wasm_f32x4_add(p[4], p[5]), wasm_f32x4_add(p[6], p[7])));
}

/* acc += step(a, b) over groups of 4 blocks of sizes xs and ys; a last partial group runs on
 * zero-padded copies (zero blocks add zero terms), so every group takes the same path. */
typedef v128_t (*bq_step4_fn)(const uint8_t *a, const uint8_t *b);

static inline void bq_dot4(const uint8_t *a, const uint8_t *b, size_t nb, size_t xs, size_t ys,
                           float *acc, bq_step4_fn step) {
  v128_t sum = wasm_v128_load(acc);
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, a += 4 * xs, b += 4 * ys) sum = wasm_f32x4_add(sum, step(a, b));
  if (i < nb) {
    uint8_t ta[4 * 36], tb[4 * 36];
    memset(ta, 0, sizeof ta);
    memset(tb, 0, sizeof tb);
    memcpy(ta, a, (nb - i) * xs);
    memcpy(tb, b, (nb - i) * ys);
    sum = wasm_f32x4_add(sum, step(ta, tb));
  }
  wasm_v128_store(acc, sum);
}

/* acc += block(a, v) (a vector of partial sums of one block's 32 products) over every block. */
typedef v128_t (*bq_block_f32_fn)(const uint8_t *a, const float *v);

static inline void bq_dot_f32_blocks(const uint8_t *a, const float *v, size_t nb, size_t xs,
                                     float *acc, bq_block_f32_fn block) {
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < nb; i++, a += xs, v += QK) sum = wasm_f32x4_add(sum, block(a, v));
  wasm_v128_store(acc, sum);
}

/* roundf(v) (half away from zero) converted the way bq_cvt_u8 does: NaN and |v| >= 2^31 give 0.
 * v - trunc(v) is exact, so comparing it with 0.5 finds the halves exactly. */
static inline v128_t bq_roundf_i32(v128_t v) {
  const v128_t t = wasm_f32x4_trunc(v);
  const v128_t up = wasm_f32x4_ge(wasm_f32x4_abs(wasm_f32x4_sub(v, t)), wasm_f32x4_splat(0.5f));
  const v128_t one = wasm_v128_or(wasm_v128_and(v, wasm_i32x4_splat((int32_t)0x80000000)),
                                  wasm_f32x4_splat(1.0f));
  const v128_t r = wasm_f32x4_add(t, wasm_v128_and(up, one));
  const v128_t valid = wasm_f32x4_lt(wasm_f32x4_abs(r), wasm_f32x4_splat(2147483648.0f));
  return wasm_v128_and(wasm_i32x4_trunc_sat_f32x4(r), valid);
}

/* acc += x . y for float element types: groups of 32 elements (loaded as floats by LOAD(p, k),
 * the k-th group of 4 at element p) sum into one vector, as in the block kernels; a last partial
 * group runs on zero-padded copies.  */
#define BQ_DOT_FLOAT(ESIZE, LOAD)                                                   \
  const uint8_t *a = x;                                                            \
  const float *v = y;                                                              \
  v128_t sum = wasm_v128_load(acc);                                                \
  size_t i = 0;                                                                    \
  for (; i + QK <= n; i += QK) {                                                   \
    v128_t p[8];                                                                   \
    for (int k = 0; k < 8; k++)                                                    \
      p[k] = wasm_f32x4_mul(LOAD(a + (i + 4 * k) * ESIZE), wasm_v128_load(v + i + 4 * k)); \
    sum = wasm_f32x4_add(sum, bq_sum8(p));                                         \
  }                                                                                \
  if (i < n) {                                                                     \
    uint8_t ta[QK * ESIZE];                                                        \
    float tv[QK];                                                                  \
    memset(ta, 0, sizeof ta);                                                      \
    memset(tv, 0, sizeof tv);                                                      \
    memcpy(ta, a + i * ESIZE, (n - i) * ESIZE);                                    \
    memcpy(tv, v + i, (n - i) * 4);                                                \
    v128_t p[8];                                                                   \
    for (int k = 0; k < 8; k++)                                                    \
      p[k] = wasm_f32x4_mul(LOAD(ta + 4 * k * ESIZE), wasm_v128_load(tv + 4 * k)); \
    sum = wasm_f32x4_add(sum, bq_sum8(p));                                         \
  }                                                                                \
  wasm_v128_store(acc, sum);                                                       \
  return BQ_OK;

/* Lane k of v in every lane. */
#define BQ_LANE(v, k) wasm_i32x4_shuffle((v), (v), (k), (k), (k), (k))

#endif
