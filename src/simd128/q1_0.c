/* Q1_0 SIMD128 kernels: quantize, dequantize and dot with Q8_0 bit-exact with ref/q1_0.c (so the
 * dot is ggml's generic vec_dot to the bit); the f32 dot sums in 4 lanes.
 *
 * An element is d or -d: -d is d with its sign bit flipped, so a decoded group of four is the
 * splat d XOR four sign flips, looked up by the group's nibble of bits (flips[], below), bit for
 * bit the reference's d or -d, NaN payloads included. (Building the flips in lanes instead, the
 * word of bits times {8, 4, 2, 1} and shifted to the sign bit, ran 0.35-0.6x as fast as the
 * lookup, dequantize and f32 dot alike, alternating rounds in Node 20.) */
#include "../generic.h"
#include "simd.h"

enum {
  QK = BQ_BLK_q1_0,
  XS = sizeof(block_q1_0),
  YS = sizeof(block_q8_0),
  XQS = offsetof(block_q1_0, qs),
  YQS = offsetof(block_q8_0, qs),
  NQ8 = BQ_BLK_q1_0 / BQ_BLK_q8_0
};
static_assert(QK == 128 && NQ8 == 4 && offsetof(block_q1_0, d) == 0, "128 sign bits after d");

/* For a nibble of four bits, the sign flips of its four elements: 0x80000000 where the bit is
 * clear (-d). */
#define F(b, l) (((b) >> (l)&1) ? 0u : 0x80000000u)
#define FLIPS(b) \
  { F(b, 0), F(b, 1), F(b, 2), F(b, 3) }
static const uint32_t flips[16][4] __attribute__((aligned(16))) = {
    FLIPS(0), FLIPS(1), FLIPS(2),  FLIPS(3),  FLIPS(4),  FLIPS(5),  FLIPS(6),  FLIPS(7),
    FLIPS(8), FLIPS(9), FLIPS(10), FLIPS(11), FLIPS(12), FLIPS(13), FLIPS(14), FLIPS(15)};
#undef FLIPS
#undef F

/* Elements 8j..8j+7 of the block at p, d splat, into w[0], w[1]. */
static inline void group8(const uint8_t *p, int j, v128_t d, v128_t *w) {
  const uint8_t b = p[XQS + j];
  w[0] = wasm_v128_xor(d, wasm_v128_load(flips[b & 15]));
  w[1] = wasm_v128_xor(d, wasm_v128_load(flips[b >> 4]));
}

static inline v128_t scale(const uint8_t *p) { return wasm_f32x4_splat(bq_h2f_fast(bq_rd16(p))); }

static inline void block_out(const uint8_t *p, float *y) {
  const v128_t d = scale(p);
  for (int j = 0; j < QK / 8; j++) {
    v128_t w[2];
    group8(p, j, d, w);
    wasm_v128_store(y + 8 * j, w[0]);
    wasm_v128_store(y + 8 * j + 4, w[1]);
  }
}

BQ_DEQUANTIZE_PROTO(q1_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *p = x;
  const size_t nb = n / QK;
  /* Two blocks per iteration (V8's back-edge bookkeeping), the input touched a run at a time
   * (simd.h). */
  size_t i = 0;
  for (; i + 2 <= nb; i += 2, p += 2 * XS, y += 2 * QK) {
    bq_touch_run(p, i, nb, BQ_TOUCH_WEIGHTS / QK, XS);
    block_out(p, y);
    block_out(p + XS, y + QK);
  }
  if (i < nb) block_out(p, y);
  return BQ_OK;
}

/* Per 32 elements, the products with v summed as bq_sum8 into the 4 lanes. */
BQ_DOT_PROTO(q1_0, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *p = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / QK; i++, p += XS) {
    const v128_t d = scale(p);
    for (int g = 0; g < QK / 32; g++, v += 32) {
      v128_t w[8];
      for (int j = 0; j < 4; j++) group8(p, 4 * g + j, d, w + 2 * j);
      for (int j = 0; j < 8; j++) w[j] = wasm_f32x4_mul(w[j], wasm_v128_load(v + 4 * j));
      sum = wasm_f32x4_add(sum, bq_sum8(w));
    }
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

/* The integer sum of +-q8 over one Q8_0 block's 32 codes at q, the signs from the 4 bytes of bits
 * at bits, as 4 i32 lane sums. The bits are spread to byte masks nm (all ones where the bit is
 * clear); q ^ nm is q where set and -q - 1 where clear, exact in int8 (-128 gives 127), so adding
 * 1 for each clear bit (subtracting the masks, -1 each, after widening) gives +-q. */
static inline v128_t signed_sum(const uint8_t *bits, const uint8_t *q) {
  const v128_t bit = wasm_i8x16_const(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const v128_t zero = wasm_i32x4_splat(0);
  const v128_t s = wasm_v128_load32_splat(bits);
  const v128_t nm0 = wasm_i8x16_eq(
      wasm_v128_and(
          wasm_i8x16_swizzle(s, wasm_i8x16_const(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1)),
          bit),
      zero);
  const v128_t nm1 = wasm_i8x16_eq(
      wasm_v128_and(
          wasm_i8x16_swizzle(s, wasm_i8x16_const(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3)),
          bit),
      zero);
  const v128_t t =
      wasm_i16x8_add(wasm_i16x8_extadd_pairwise_i8x16(wasm_v128_xor(wasm_v128_load(q), nm0)),
                     wasm_i16x8_extadd_pairwise_i8x16(wasm_v128_xor(wasm_v128_load(q + 16), nm1)));
  /* |t| <= 4 * 128 per lane, and nm0 + nm1 is 0, -1 or -2 per byte */
  const v128_t c = wasm_i16x8_extadd_pairwise_i8x16(wasm_i8x16_add(nm0, nm1));
  return wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_sub(t, c));
}

/* The terms d * sumi of four Q1_0 blocks at a (lanes: blocks), sumi = ((0 + dy_0 * s_0) +
 * dy_1 * s_1) + ... over each block's four Q8_0 blocks at b, in the reference's float order. */
static inline v128_t terms4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t sumi = wasm_f32x4_splat(0.0f);
  for (int q = 0; q < NQ8; q++) {
    /* lanes: block i's integer sum against its Q8_0 block q */
    const v128_t s =
        bq_hsum4_i32(signed_sum(a + XQS + 4 * q, b + q * YS + YQS),
                     signed_sum(a + XS + XQS + 4 * q, b + (NQ8 + q) * YS + YQS),
                     signed_sum(a + 2 * XS + XQS + 4 * q, b + (2 * NQ8 + q) * YS + YQS),
                     signed_sum(a + 3 * XS + XQS + 4 * q, b + (3 * NQ8 + q) * YS + YQS));
    const v128_t dy = bq_h2f_x4(k, bq_load_u16x4(b + q * YS, NQ8 * YS));
    sumi = wasm_f32x4_add(sumi, wasm_f32x4_mul(dy, wasm_f32x4_convert_i32x4(s)));
  }
  return wasm_f32x4_mul(bq_h2f_x4(k, bq_load_u16x4(a, XS)), sumi);
}

/* The reference's one running sum: sumf += d * sumi block by block, in order, in acc[0] (acc[1..3]
 * stay 0, so the SIMD lane sum reads acc[0] exactly: a running sum from +0 is never -0). The
 * integer sums and the per-block floats take four blocks at a time, and the four terms are added
 * in order (bq_add_lanes_in_order); a last partial group runs on zero-padded copies, its padding's
 * terms made -0 (bq_keep_lanes). */
BQ_DOT_PROTO(q1_0, q8_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const bq_k k = bq_consts();
  const uint8_t *a = x, *b = y;
  const size_t nb = n / QK;
  v128_t sumf = wasm_v128_load32_splat(acc);
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, a += 4 * XS, b += 4 * NQ8 * YS)
    sumf = bq_add_lanes_in_order(sumf, terms4(&k, a, b));
  if (i < nb) {
    uint8_t ta[4 * XS], tb[4 * NQ8 * YS];
    memset(ta, 0, sizeof ta);
    memset(tb, 0, sizeof tb);
    memcpy(ta, a, (nb - i) * XS);
    memcpy(tb, b, (nb - i) * NQ8 * YS);
    sumf = bq_add_lanes_in_order(sumf, bq_keep_lanes(terms4(&k, ta, tb), nb - i));
  }
  wasm_v128_store32_lane(acc, sumf, 0);
  return BQ_OK;
}

/* matvec: rows of the dot above, each read by the SIMD lane sum (generic.h). */
BQ_DEFINE_MATVEC(q1_0, q8_0, __simd128)

/* Quantize, four blocks at a time: block i's sum of |x| runs in lane i in element order (a 4x4
 * transpose brings element j of the four blocks into one vector), so each lane adds exactly as the
 * reference; a block whose sum is NaN is redone by the reference (fp.h's NaN rules). The bits are
 * x >= 0, 16 at a time through i8x16.bitmask. */
static inline void quantize_bits(const float *x, uint8_t *qs) {
  const v128_t z = wasm_f32x4_splat(0.0f);
  for (int j = 0; j < QK; j += 16) {
    const v128_t m0 = wasm_f32x4_ge(wasm_v128_load(x + j), z);
    const v128_t m1 = wasm_f32x4_ge(wasm_v128_load(x + j + 4), z);
    const v128_t m2 = wasm_f32x4_ge(wasm_v128_load(x + j + 8), z);
    const v128_t m3 = wasm_f32x4_ge(wasm_v128_load(x + j + 12), z);
    const uint32_t bits = wasm_i8x16_bitmask(
        wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(m0, m1), wasm_i16x8_narrow_i32x4(m2, m3)));
    bq_wr16(qs + j / 8, (uint16_t)bits);
  }
}

BQ_QUANTIZE_PROTO(q1_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const size_t nb = n / QK;
  uint8_t *out = y;
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, x += 4 * QK, out += 4 * XS) {
    v128_t sum = wasm_f32x4_splat(0.0f);
    for (int j = 0; j < QK; j += 4) {
      const v128_t r0 = wasm_v128_load(x + j), r1 = wasm_v128_load(x + QK + j);
      const v128_t r2 = wasm_v128_load(x + 2 * QK + j), r3 = wasm_v128_load(x + 3 * QK + j);
      const v128_t t01l = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5);
      const v128_t t23l = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
      const v128_t t01h = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7);
      const v128_t t23h = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
      sum = wasm_f32x4_add(sum, wasm_f32x4_abs(wasm_i64x2_shuffle(t01l, t23l, 0, 2)));
      sum = wasm_f32x4_add(sum, wasm_f32x4_abs(wasm_i64x2_shuffle(t01l, t23l, 1, 3)));
      sum = wasm_f32x4_add(sum, wasm_f32x4_abs(wasm_i64x2_shuffle(t01h, t23h, 0, 2)));
      sum = wasm_f32x4_add(sum, wasm_f32x4_abs(wasm_i64x2_shuffle(t01h, t23h, 1, 3)));
    }
    float s[4];
    wasm_v128_store(s, wasm_f32x4_div(sum, wasm_f32x4_splat((float)QK)));
    for (int b = 0; b < 4; b++) {
      if (s[b] != s[b]) {
        bq_q1_0_quantize__ref(x + b * QK, out + b * XS, QK);
        continue;
      }
      bq_wr16(out + b * XS, bq_fp32_to_fp16(s[b]));
      quantize_bits(x + b * QK, out + b * XS + XQS);
    }
  }
  if (i < nb) bq_q1_0_quantize__ref(x, out, (nb - i) * QK);
  return BQ_OK;
}
