/* MXFP4 SIMD128 kernels: dequantize bit-exact with ref/mxfp4.c; dot with Q8_0 from the same exact
 * integer block sums and per-block terms (2^(e-128) * dy) * sumi in 4 lanes (groups of 4 blocks).
 *
 * The scale is ggml's GGML_E8M0_TO_FP32_HALF, 2^(e - 128), and the table holds twice the E2M1
 * values (bq_kvalues_mxfp4), so a weight is value * 2^(e - 128), exact or overflowing to Inf. The
 * decoders multiply value * 2^24 by 2^(e - 152), exact for e >= 3; blocks with a smaller e (scale
 * 2^-128..2^-126, where 2^(e - 152) is not a float) are decoded by the reference. */
#include "iq.h"

enum {
  XS = sizeof(block_mxfp4),
  YS = sizeof(block_q8_0),
  XE = offsetof(block_mxfp4, e),
  XQS = offsetof(block_mxfp4, qs),
  YQS = offsetof(block_q8_0, qs)
};
static_assert(BQ_BLK_mxfp4 == BQ_B32 && XE == 0, "32 values, e first");
static_assert(sizeof(block_mxfp4) <= BQ_B32_MAX_BYTES, "fits the helpers' padded groups");

/* The bits of 2^(e - 152) for e >= 26 (normal); 0 when the block takes the reference (e < 26:
 * rare, and it keeps the common path free of the subnormal cases). */
static inline uint32_t scale24_bits(uint8_t e) { return e >= 26 ? (uint32_t)(e - 25) << 23 : 0; }

/* One block's 32 weights to y; a block with a rare small e takes the reference. */
static inline void block_out(const bq_k *k, const uint8_t *p, uint32_t *st, const uint32_t *ld,
                             float *y) {
  const uint32_t bits = scale24_bits(p[XE]);
  if (__builtin_expect(bits == 0, 0)) {
    bq_mxfp4_dequantize__ref(p, y, BQ_B32);
    return;
  }
  st[0] = bits;
  v128_t w[8];
  bq_iq4_weights(k, BQ_MXFP4_VALUES, p + XQS, wasm_v128_load32_splat(ld), w);
  for (int j = 0; j < 8; j++) {
    wasm_v128_store(y + 4 * j, w[j]);
    BQ_STORE_ORDER(); /* in ascending order (simd.h) */
  }
}

/* The 32 products of a block with v, summed as bq_sum8, for a block with a small e (out of line,
 * so its stack buffer stays out of the loop). */
__attribute__((noinline)) static v128_t block_dot_ref(const uint8_t *p, const float *v) {
  float t[BQ_B32];
  bq_mxfp4_dequantize__ref(p, t, BQ_B32);
  v128_t w[8];
  for (int j = 0; j < 8; j++)
    w[j] = wasm_f32x4_mul(wasm_v128_load(t + 4 * j), wasm_v128_load(v + 4 * j));
  return bq_sum8(w);
}

BQ_DEQUANTIZE_PROTO(mxfp4, __simd128) {
  if (n % BQ_BLK_mxfp4) return BQ_EINVAL;
  const bq_k k = bq_consts();
  uint32_t *st = bq_scale_slot;
  const uint32_t *ld = bq_scale_slot_alias;
  const uint8_t *p = x;
  const size_t nb = n / BQ_BLK_mxfp4;
  const size_t run = BQ_TOUCH_WEIGHTS / BQ_B32;
  size_t i = 0;
  /* Two blocks per iteration, as bq_dequantize_blocks (V8's back-edge bookkeeping); the input
   * touched a run at a time (simd.h). */
  for (; i + 2 <= nb; i += 2, p += 2 * XS, y += 2 * BQ_B32) {
    bq_touch_run(p, i, nb, run, XS);
    block_out(&k, p, st, ld, y);
    block_out(&k, p + XS, st, ld, y + BQ_B32);
  }
  if (i < nb) block_out(&k, p, st, ld, y);
  return BQ_OK;
}

BQ_DOT_PROTO(mxfp4, f32, __simd128) {
  if (n % BQ_BLK_mxfp4) return BQ_EINVAL;
  const bq_k k = bq_consts();
  uint32_t *st = bq_scale_slot;
  const uint32_t *ld = bq_scale_slot_alias;
  const uint8_t *p = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / BQ_BLK_mxfp4; i++, p += XS, v += BQ_B32) {
    const uint32_t bits = scale24_bits(p[XE]);
    if (__builtin_expect(bits == 0, 0)) {
      sum = wasm_f32x4_add(sum, block_dot_ref(p, v));
      continue;
    }
    st[0] = bits;
    v128_t w[8];
    bq_iq4_weights(&k, BQ_MXFP4_VALUES, p + XQS, wasm_v128_load32_splat(ld), w);
    for (int j = 0; j < 8; j++) w[j] = wasm_f32x4_mul(w[j], wasm_v128_load(v + 4 * j));
    sum = wasm_f32x4_add(sum, bq_sum8(w));
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

static inline v128_t isum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  bq_iq4_values(k, BQ_MXFP4_VALUES, wasm_v128_load(a + XQS), &lo, &hi);
  return bq_dot_i8x32(lo, hi, wasm_v128_load(b + YQS), wasm_v128_load(b + YQS + 16));
}

/* Terms (dy * 2^(e-128)) * sumi of four blocks. 2^(e-128) from the E8M0 byte in integer lanes:
 * (e - 1) << 23 for e >= 2, and the subnormals 2^-128 = 0x00200000, 2^-127 = 0x00400000, that is
 * (e + 1) << 21, for e = 0 and 1 (bq_e8m0_half). */
static inline v128_t terms(const uint8_t *a, v128_t si, v128_t dy) {
  const v128_t e = wasm_v128_and(bq_load_u16x4(a + XE, XS), wasm_i32x4_const(255, 255, 255, 255));
  const v128_t one = wasm_i32x4_const(1, 1, 1, 1);
  const v128_t dx = wasm_v128_bitselect(wasm_i32x4_shl(wasm_i32x4_add(e, one), 21),
                                        wasm_i32x4_shl(wasm_i32x4_sub(e, one), 23),
                                        wasm_u32x4_lt(e, wasm_i32x4_const(2, 2, 2, 2)));
  return wasm_f32x4_mul(wasm_f32x4_mul(dy, dx), wasm_f32x4_convert_i32x4(si));
}

static inline v128_t step4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(k, a, b), isum(k, a + XS, b + YS),
                                 isum(k, a + 2 * XS, b + 2 * YS), isum(k, a + 3 * XS, b + 3 * YS));
  return terms(a, si, bq_h2f_x4(k, bq_load_u16x4(b, YS)));
}

BQ_DOT_PROTO(mxfp4, q8_0, __simd128) {
  if (n % BQ_BLK_mxfp4) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_mxfp4, XS, YS, acc, step4);
  return BQ_OK;
}

/* matvec: step4's terms against activations prepared once (simd128/matvec.c). */
static inline v128_t pstep4(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i) {
  v128_t s[4];
  /* Not unrolled: V8 hoists the loads of unrolled copies and then spills. */
#pragma clang loop unroll(disable)
  for (int b = 0; b < 4; b++) {
    v128_t lo, hi;
    bq_iq4_values(k, BQ_MXFP4_VALUES, wasm_v128_load(a + XS * b + XQS), &lo, &hi);
    s[b] = bq_dot_i8_i16(lo, hi, p->q + (i + b) * BQ_B32);
  }
  return terms(a, bq_hsum4_i32(s[0], s[1], s[2], s[3]), wasm_v128_load(p->d + i));
}

BQ_MATVEC_PROTO(mxfp4, q8_0, __simd128) {
  return bq_matvec_prepared(w, rows, cols, x, y, XS, YS, YQS, BQ_PREP_PLAIN, pstep4,
                            bq_mxfp4_dot_q8_0__simd128);
}

/* The shared exponents of four blocks from their maxima (one per lane): floor((float)log2(amax)) -
 * 2 + 127 as the reference computes it, without the log2 where the exponent field gives it. For a
 * normal amax = m * 2^k (m in [1, 2)), log2 is k + log2(m), and unless m is within 2^-15 of 2,
 * k + log2(m) is more than 2^-17 below k + 1, farther than the half ulp of any float below 128
 * (2^-18), so it rounds to a float below k + 1 and the floor is k: the byte is the biased exponent
 * minus 2 (mod 256, as the reference's conversion keeps it). A zero maximum gives 0. Subnormal, Inf
 * and near-2 maxima (rare) take the reference's formula, out of line. */
__attribute__((noinline)) static v128_t exponents_slow(v128_t amax) {
  float a[4];
  int32_t e[4];
  wasm_v128_store(a, amax);
  for (int b = 0; b < 4; b++)
    e[b] = a[b] > 0 ? bq_cvt_u8(floorf((float)log2((double)a[b])) - 2 + 127) : 0;
  return wasm_v128_load(e);
}

static inline v128_t exponents(v128_t amax) {
  const v128_t k = wasm_u32x4_shr(amax, 23), man = wasm_v128_and(amax, wasm_i32x4_splat(0x7FFFFF));
  const v128_t zero = wasm_i32x4_eq(amax, wasm_i32x4_splat(0));
  const v128_t fast = wasm_v128_or(
      zero,
      wasm_v128_and(wasm_u32x4_lt(wasm_i32x4_sub(k, wasm_i32x4_splat(1)), wasm_i32x4_splat(254)),
                    wasm_u32x4_lt(man, wasm_i32x4_splat(0x7FFF00))));
  if (!wasm_i32x4_all_true(fast)) return exponents_slow(amax);
  /* the byte, as the reference's conversion keeps it: k = 1 gives -1, that is 255 */
  return wasm_v128_andnot(
      wasm_v128_and(wasm_i32x4_sub(k, wasm_i32x4_splat(2)), wasm_i32x4_splat(255)), zero);
}

/* bq_e8m0_half of four exponents: 2^(e - 128) (e = 0, 1: the subnormals 2^-128, 2^-127). */
static inline v128_t e8m0_half_x4(v128_t e) {
  const v128_t sub = wasm_v128_bitselect(wasm_i32x4_splat(0x00400000), wasm_i32x4_splat(0x00200000),
                                         wasm_i32x4_eq(e, wasm_i32x4_splat(1)));
  return wasm_v128_bitselect(sub, wasm_i32x4_shl(wasm_i32x4_sub(e, wasm_i32x4_splat(1)), 23),
                             wasm_i32x4_lt(e, wasm_i32x4_splat(2)));
}

/* max |x| of a block over the values that are not NaN (the reference's amax < |x| never takes a
 * NaN; pmax keeps its first operand against a NaN, and the lanes' maxima combine in any order). */
static inline v128_t block_max(const float *xb) {
  v128_t m = wasm_f32x4_splat(0.0f);
  for (int j = 0; j < BQ_BLK_mxfp4; j += 4)
    m = wasm_f32x4_pmax(m, wasm_f32x4_abs(wasm_v128_load(xb + j)));
  return m;
}

/* Four blocks at x into out (4 * 17 bytes): their maxima reduced into one vector, the exponents and
 * scales of all four at once, then each block's codes against its own scale. */
static inline void quantize4(const float *x, uint8_t *out) {
  const v128_t amax =
      bq_hmax4_f32(block_max(x), block_max(x + 32), block_max(x + 64), block_max(x + 96));
  const v128_t e = exponents(amax), d = e8m0_half_x4(e);
  const v128_t d4[4] = {BQ_LANE(d, 0), BQ_LANE(d, 1), BQ_LANE(d, 2), BQ_LANE(d, 3)};
  for (int b = 0; b < 4; b++) {
    v128_t c[8];
    for (int k = 0; k < 8; k++)
      c[k] = wasm_f32x4_mul(wasm_f32x4_splat((float)bq_kvalues_mxfp4[k]), d4[b]);
    const float *xb = x + 32 * b;
    uint8_t *o = out + b * sizeof(block_mxfp4);
    const v128_t lo = bq_fp4_codes16(c, xb), hi = bq_fp4_codes16(c, xb + 16);
    wasm_v128_store(o + XQS, wasm_v128_or(lo, wasm_i8x16_shl(hi, 4)));
  }
  wasm_v128_store8_lane(out + XE, e, 0);
  wasm_v128_store8_lane(out + sizeof(block_mxfp4) + XE, e, 4);
  wasm_v128_store8_lane(out + 2 * sizeof(block_mxfp4) + XE, e, 8);
  wasm_v128_store8_lane(out + 3 * sizeof(block_mxfp4) + XE, e, 12);
}

/* Quantize, four blocks at a time; the last one to three blocks through a zero-padded copy. */
BQ_QUANTIZE_PROTO(mxfp4, __simd128) {
  if (n % BQ_BLK_mxfp4) return BQ_EINVAL;
  const size_t nb = n / BQ_BLK_mxfp4;
  uint8_t *out = y;
  size_t i = 0;
  for (; i + 4 <= nb; i += 4) quantize4(x + BQ_BLK_mxfp4 * i, out + i * sizeof(block_mxfp4));
  if (i < nb) {
    float t[4 * BQ_BLK_mxfp4] = {0};
    uint8_t q[4 * sizeof(block_mxfp4)];
    memcpy(t, x + BQ_BLK_mxfp4 * i, (nb - i) * BQ_BLK_mxfp4 * sizeof(float));
    quantize4(t, q);
    memcpy(out + i * sizeof(block_mxfp4), q, (nb - i) * sizeof(block_mxfp4));
  }
  return BQ_OK;
}
