/* NVFP4 SIMD128 kernels: quantize, dequantize and dot with Q8_0 bit-exact with ref/nvfp4.c (so the
 * dot is ggml's generic vec_dot to the bit); the f32 dot sums in 4 lanes.
 *
 * The table holds twice the E2M1 values (bq_kvalues_mxfp4) and a scale is a UE4M3 byte halved
 * (bq_ue4m3_half): 0, m * 2^-10 (m = 1..7) or (8 + m) * 2^(e-11), 4 significant bits. A weight is
 * value * d, exact (at most 8 significant bits), and so is (value * 2^24) * (d * 2^-24), which the
 * decoders compute (iq.h: the value in the top byte of an i32 lane, converted exactly); d * 2^-24
 * is at least 2^-34, a normal float. Sixteen bytes of codes are two sub-blocks: the low nibbles of
 * bytes 0..7 are sub-block 0's elements 0..7, the high ones its 8..15, bytes 8..15 sub-block 1. */
#include "../generic.h"
#include "iq.h"

enum {
  QK = BQ_BLK_nvfp4,
  SUB = BQ_NVFP4_SUB,
  XS = sizeof(block_nvfp4),
  YS = sizeof(block_q8_0),
  XD = offsetof(block_nvfp4, d),
  XQS = offsetof(block_nvfp4, qs),
  YQS = offsetof(block_q8_0, qs)
};
static_assert(QK == 64 && SUB == 16 && XD == 0 && XQS == 4, "four scale bytes, then 32 code bytes");
static_assert(2 * BQ_BLK_q8_0 == QK, "a block spans two Q8_0 blocks");

/* Every scale byte's value, bq_ue4m3_half as a constant expression: 0x7F is 0, exponent 0 is
 * m / 1024, others (8 + m) * 2^e / 2048 (all exact). One lookup per scale is faster than decoding
 * four at a time in vector lanes (about 2x the dequantize speed at 64K weights). */
#define UE(b)                                                              \
  ((b) == 0x7F       ? 0.0f                                                \
   : ((b) >> 3 & 15) ? (float)((8 + ((b)&7)) << ((b) >> 3 & 15)) / 2048.0f \
                     : (float)((b)&7) / 1024.0f)
#define UE4(b) UE(b), UE((b) + 1), UE((b) + 2), UE((b) + 3)
#define UE16(b) UE4(b), UE4((b) + 4), UE4((b) + 8), UE4((b) + 12)
#define UE64(b) UE16(b), UE16((b) + 16), UE16((b) + 32), UE16((b) + 48)
static const float scale_of[256] = {UE64(0), UE64(64), UE64(128), UE64(192)};
#undef UE64
#undef UE16
#undef UE4
#undef UE
/* The four scales of the block at p times 2^e, e = 0 or -24, in lanes 0..3. */
static inline v128_t scales4(const uint8_t *p, int e) {
  v128_t d = wasm_v128_load32_zero(&scale_of[p[0]]);
  d = wasm_v128_load32_lane(&scale_of[p[1]], d, 1);
  d = wasm_v128_load32_lane(&scale_of[p[2]], d, 2);
  d = wasm_v128_load32_lane(&scale_of[p[3]], d, 3);
  return e ? wasm_f32x4_mul(d, wasm_f32x4_splat(0x1p-24f)) : d;
}

/* The 32 weights of sub-blocks 2h and 2h + 1 of the block at p into w[0..7], d24 = the four
 * scales times 2^-24. */
static inline void weights32(const bq_k *k, const uint8_t *p, int h, v128_t d24, v128_t w[8]) {
  v128_t lo, hi;
  bq_iq4_values(k, BQ_MXFP4_VALUES, wasm_v128_load(p + XQS + 16 * h), &lo, &hi);
  const v128_t s0 = wasm_i64x2_shuffle(lo, hi, 0, 2), s1 = wasm_i64x2_shuffle(lo, hi, 1, 3);
  bq_top_bytes_mul(s0, h ? BQ_LANE(d24, 2) : BQ_LANE(d24, 0), w);
  bq_top_bytes_mul(s1, h ? BQ_LANE(d24, 3) : BQ_LANE(d24, 1), w + 4);
}

static inline void block_out(const bq_k *k, const uint8_t *p, float *y) {
  const v128_t d24 = scales4(p, -24);
  for (int h = 0; h < 2; h++) {
    v128_t w[8];
    weights32(k, p, h, d24, w);
    for (int j = 0; j < 8; j++) {
      wasm_v128_store(y + 32 * h + 4 * j, w[j]);
      BQ_STORE_ORDER(); /* in ascending order (simd.h) */
    }
  }
}

BQ_DEQUANTIZE_PROTO(nvfp4, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const bq_k k = bq_consts();
  const uint8_t *p = x;
  const size_t nb = n / QK;
  /* Two blocks per iteration (V8's back-edge bookkeeping), the input touched a run at a time
   * (simd.h). */
  size_t i = 0;
  for (; i + 2 <= nb; i += 2, p += 2 * XS, y += 2 * QK) {
    bq_touch_run(p, i, nb, BQ_TOUCH_WEIGHTS / QK, XS);
    block_out(&k, p, y);
    block_out(&k, p + XS, y + QK);
  }
  if (i < nb) block_out(&k, p, y);
  return BQ_OK;
}

/* Per 32 elements, the products with v summed as bq_sum8 into the 4 lanes. */
BQ_DOT_PROTO(nvfp4, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const bq_k k = bq_consts();
  const uint8_t *p = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / QK; i++, p += XS) {
    const v128_t d24 = scales4(p, -24);
    for (int h = 0; h < 2; h++, v += 32) {
      v128_t w[8];
      weights32(&k, p, h, d24, w);
      for (int j = 0; j < 8; j++) w[j] = wasm_f32x4_mul(w[j], wasm_v128_load(v + 4 * j));
      sum = wasm_f32x4_add(sum, bq_sum8(w));
    }
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

/* The integer sum of 16 int8 products, as 4 i32 lane sums. */
static inline v128_t dot16(v128_t v, v128_t q) {
  return wasm_i32x4_add(
      wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(v), wasm_i16x8_extend_low_i8x16(q)),
      wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(v), wasm_i16x8_extend_high_i8x16(q)));
}

/* The integer sums of the block at a against its two Q8_0 blocks at b, one per sub-block, in
 * lanes 0..3. Sub-block 2h + j's codes are the low (j = 0) or high (j = 1) halves of lo and hi
 * (weights32's layout), against bytes 16j..16j+15 of Q8_0 block h. */
static inline v128_t sums4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t part[4];
  for (int h = 0; h < 2; h++) {
    v128_t lo, hi;
    bq_iq4_values(k, BQ_MXFP4_VALUES, wasm_v128_load(a + XQS + 16 * h), &lo, &hi);
    part[2 * h] = dot16(wasm_i64x2_shuffle(lo, hi, 0, 2), wasm_v128_load(b + h * YS + YQS));
    part[2 * h + 1] =
        dot16(wasm_i64x2_shuffle(lo, hi, 1, 3), wasm_v128_load(b + h * YS + YQS + 16));
  }
  return bq_hsum4_i32(part[0], part[1], part[2], part[3]);
}

/* The four terms (dy * d) * sumi of the block at a, in the reference's order in lanes 0..3. */
static inline v128_t terms(const bq_k *k, const uint8_t *a, const uint8_t *b, v128_t s) {
  const v128_t dy = bq_h2f_x4(
      k, wasm_i32x4_shuffle(wasm_v128_load16_splat(b), wasm_v128_load16_splat(b + YS), 0, 0, 4, 4));
  return wasm_f32x4_mul(wasm_f32x4_mul(dy, scales4(a, 0)), wasm_f32x4_convert_i32x4(s));
}

/* The reference's one running sum: sumf += each sub-block's term, in order
 * (bq_add_lanes_in_order), in acc[0] (acc[1..3] stay 0, so the SIMD lane sum reads acc[0] exactly:
 * a running sum from +0 is never -0). */
BQ_DOT_PROTO(nvfp4, q8_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const bq_k k = bq_consts();
  const uint8_t *a = x, *b = y;
  v128_t sumf = wasm_v128_load32_splat(acc);
  for (size_t i = 0; i < n / QK; i++, a += XS, b += 2 * YS)
    sumf = bq_add_lanes_in_order(sumf, terms(&k, a, b, sums4(&k, a, b)));
  wasm_v128_store32_lane(acc, sumf, 0);
  return BQ_OK;
}

/* The sums4 of the block at a against prepared activations (int16 codes, simd.h) from element e. */
static inline v128_t psums4(const bq_k *k, const uint8_t *a, const int16_t *q) {
  v128_t part[4];
  for (int h = 0; h < 2; h++, q += 32) {
    v128_t lo, hi;
    bq_iq4_values(k, BQ_MXFP4_VALUES, wasm_v128_load(a + XQS + 16 * h), &lo, &hi);
    part[2 * h] = wasm_i32x4_add(
        wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(lo), wasm_v128_load(q)),
        wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(hi), wasm_v128_load(q + 8)));
    part[2 * h + 1] = wasm_i32x4_add(
        wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(lo), wasm_v128_load(q + 16)),
        wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(hi), wasm_v128_load(q + 24)));
  }
  return bq_hsum4_i32(part[0], part[1], part[2], part[3]);
}

/* matvec: four rows at a time against activations prepared once, row r's running sum in lane r.
 * Per block, the four rows' terms (lanes: sub-blocks, as the dot's) are transposed so that vector
 * s holds each row's sub-block s term, and added in order: each lane adds exactly the dot's terms
 * in the dot's order, so a row equals the dot (whose state sum reads acc[0] as it is). The rows
 * left over, and activations too long to prepare, take the dot. */
BQ_MATVEC_PROTO(nvfp4, q8_0, __simd128) {
  if (cols % QK) return BQ_EINVAL;
  const size_t nb = cols / QK, rb = nb * XS;
  const uint8_t *wr = w;
  size_t r = 0;
  bq_prep pr;
  if (bq_prepare_q8(x, 2 * nb, YS, YQS, BQ_PREP_PLAIN, &pr)) {
    const bq_k k = bq_consts();
    for (; r + 4 <= rows; r += 4, wr += 4 * rb) {
      v128_t sum = wasm_f32x4_splat(0.0f);
      for (size_t i = 0; i < nb; i++) {
        const v128_t d2 = wasm_v128_load64_zero(pr.d + 2 * i);
        const v128_t dy = wasm_i32x4_shuffle(d2, d2, 0, 0, 1, 1);
        const int16_t *q = pr.q + i * QK;
        v128_t t[4];
        for (int j = 0; j < 4; j++) {
          const uint8_t *a = wr + j * rb + i * XS;
          t[j] = wasm_f32x4_mul(wasm_f32x4_mul(dy, scales4(a, 0)),
                                wasm_f32x4_convert_i32x4(psums4(&k, a, q)));
        }
        const v128_t t01l = wasm_i32x4_shuffle(t[0], t[1], 0, 4, 1, 5);
        const v128_t t23l = wasm_i32x4_shuffle(t[2], t[3], 0, 4, 1, 5);
        const v128_t t01h = wasm_i32x4_shuffle(t[0], t[1], 2, 6, 3, 7);
        const v128_t t23h = wasm_i32x4_shuffle(t[2], t[3], 2, 6, 3, 7);
        sum = wasm_f32x4_add(sum, wasm_i64x2_shuffle(t01l, t23l, 0, 2));
        sum = wasm_f32x4_add(sum, wasm_i64x2_shuffle(t01l, t23l, 1, 3));
        sum = wasm_f32x4_add(sum, wasm_i64x2_shuffle(t01h, t23h, 0, 2));
        sum = wasm_f32x4_add(sum, wasm_i64x2_shuffle(t01h, t23h, 1, 3));
      }
      wasm_v128_store(y + r, sum);
    }
  }
  for (; r < rows; r++, wr += rb) {
    float acc[BQ_ACC_LANES] = {0};
    bq_nvfp4_dot_q8_0__simd128(wr, x, cols, acc);
    y[r] = bq_acc_sum__simd128(acc);
  }
  return BQ_OK;
}

/* Quantize, a sub-block at a time: max |x| over the values that are not NaN (the reference's
 * amax < |x| never takes a NaN, and the lanes' maxima combine in any order), its UE4M3 scale as
 * the reference computes it, then the codes of the 16 values (iq.h), two sub-blocks' codes packed
 * into 16 bytes: element j < 8 in the low nibble of byte j, j + 8 in its high nibble. */
static inline v128_t sub_codes(const float *x, uint8_t *ue) {
  v128_t m = wasm_f32x4_splat(0.0f);
  for (int j = 0; j < SUB; j += 4) m = wasm_f32x4_pmax(m, wasm_f32x4_abs(wasm_v128_load(x + j)));
  m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(m, m, 2, 3, 0, 1));
  m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
  *ue = bq_ue4m3_from_f32(wasm_f32x4_extract_lane(m, 0) / 6.0f);
  const float d = bq_ue4m3_half(*ue);
  v128_t c[8];
  for (int k = 0; k < 8; k++) c[k] = wasm_f32x4_splat((float)bq_kvalues_mxfp4[k] * d);
  return bq_fp4_codes16(c, x);
}

BQ_QUANTIZE_PROTO(nvfp4, __simd128) {
  if (n % QK) return BQ_EINVAL;
  uint8_t *out = y;
  for (size_t i = 0; i < n / QK; i++, x += QK, out += XS) {
    for (int h = 0; h < 2; h++) {
      const v128_t c0 = sub_codes(x + 32 * h, out + XD + 2 * h);
      const v128_t c1 = sub_codes(x + 32 * h + SUB, out + XD + 2 * h + 1);
      const v128_t lo = wasm_i64x2_shuffle(c0, c1, 0, 2), hi = wasm_i64x2_shuffle(c0, c1, 1, 3);
      wasm_v128_store(out + XQS + 16 * h, wasm_v128_or(lo, wasm_i16x8_shl(hi, 4)));
    }
  }
  return BQ_OK;
}
