/* Q2_0 SIMD128 kernels: quantize, dequantize and dot with Q8_0 bit-exact with ref/q2_0.c (so the
 * dot is ggml's generic vec_dot to the bit); the f32 dot sums in 4 lanes.
 *
 * A byte of codes is four consecutive elements, (code - 1) * d each: the decoders look the byte's
 * four values code - 1 up as floats (values[], below) and multiply by d, the reference's product.
 */
#include "../generic.h"
#include "simd.h"

enum {
  QK = BQ_BLK_q2_0,
  XS = sizeof(block_q2_0),
  YS = sizeof(block_q8_0),
  XQS = offsetof(block_q2_0, qs),
  YQS = offsetof(block_q8_0, qs),
  NQ8 = BQ_BLK_q2_0 / BQ_BLK_q8_0
};
static_assert(QK == 64 && NQ8 == 2 && offsetof(block_q2_0, d) == 0, "64 2-bit codes after d");

/* For each byte of codes, its four elements' code - 1, as floats. */
#define V(b, l) ((float)((int)((b) >> 2 * (l)&3) - 1))
#define V1(b) \
  { V(b, 0), V(b, 1), V(b, 2), V(b, 3) }
#define V4(b) V1(b), V1((b) + 1), V1((b) + 2), V1((b) + 3)
#define V16(b) V4(b), V4((b) + 4), V4((b) + 8), V4((b) + 12)
#define V64(b) V16(b), V16((b) + 16), V16((b) + 32), V16((b) + 48)
static const float values[256][4]
    __attribute__((aligned(16))) = {V64(0), V64(64), V64(128), V64(192)};
#undef V64
#undef V16
#undef V4
#undef V1
#undef V

static inline v128_t scale(const uint8_t *p) { return wasm_f32x4_splat(bq_h2f_fast(bq_rd16(p))); }

/* Elements 4j..4j+3 of the block at p, d splat. */
static inline v128_t group4(const uint8_t *p, int j, v128_t d) {
  return wasm_f32x4_mul(wasm_v128_load(values[p[XQS + j]]), d);
}

static inline void block_out(const uint8_t *p, float *y) {
  const v128_t d = scale(p);
  for (int j = 0; j < QK / 4; j++) wasm_v128_store(y + 4 * j, group4(p, j, d));
}

BQ_DEQUANTIZE_PROTO(q2_0, __simd128) {
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
BQ_DOT_PROTO(q2_0, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *p = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / QK; i++, p += XS) {
    const v128_t d = scale(p);
    for (int g = 0; g < QK / 32; g++, v += 32) {
      v128_t w[8];
      for (int j = 0; j < 8; j++)
        w[j] = wasm_f32x4_mul(group4(p, 8 * g + j, d), wasm_v128_load(v + 4 * j));
      sum = wasm_f32x4_add(sum, bq_sum8(w));
    }
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

/* The integer sum of (code - 1) * q8 over one Q8_0 block's 32 codes at q, the codes in the 8
 * bytes at c, as 4 i32 lane sums: code = 2 * hi + lo of its two bits, so the sum is 2 * (sum of q
 * where hi is set) + (sum of q where lo is set) - (sum of q). Each byte is spread to its four
 * elements' bytes and tested against the bit of each element's position. */
static inline v128_t code_sum(const uint8_t *c, const uint8_t *q) {
  const v128_t lo = wasm_i8x16_const(1, 4, 16, 64, 1, 4, 16, 64, 1, 4, 16, 64, 1, 4, 16, 64);
  const v128_t hi =
      wasm_i8x16_const(2, 8, 32, -128, 2, 8, 32, -128, 2, 8, 32, -128, 2, 8, 32, -128);
  const v128_t b = wasm_v128_load64_zero(c);
  const v128_t s0 =
      wasm_i8x16_swizzle(b, wasm_i8x16_const(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
  const v128_t s1 =
      wasm_i8x16_swizzle(b, wasm_i8x16_const(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7));
  const v128_t q0 = wasm_v128_load(q), q1 = wasm_v128_load(q + 16);
  const v128_t l0 = wasm_v128_and(q0, wasm_i8x16_eq(wasm_v128_and(s0, lo), lo));
  const v128_t l1 = wasm_v128_and(q1, wasm_i8x16_eq(wasm_v128_and(s1, lo), lo));
  const v128_t h0 = wasm_v128_and(q0, wasm_i8x16_eq(wasm_v128_and(s0, hi), hi));
  const v128_t h1 = wasm_v128_and(q1, wasm_i8x16_eq(wasm_v128_and(s1, hi), hi));
  /* i16 lanes: each a sum of 4 codes' worth, |2h + l - a| <= 4 * 128 * 4 */
  const v128_t h =
      wasm_i16x8_add(wasm_i16x8_extadd_pairwise_i8x16(h0), wasm_i16x8_extadd_pairwise_i8x16(h1));
  const v128_t l =
      wasm_i16x8_add(wasm_i16x8_extadd_pairwise_i8x16(l0), wasm_i16x8_extadd_pairwise_i8x16(l1));
  const v128_t a =
      wasm_i16x8_add(wasm_i16x8_extadd_pairwise_i8x16(q0), wasm_i16x8_extadd_pairwise_i8x16(q1));
  return wasm_i32x4_extadd_pairwise_i16x8(
      wasm_i16x8_sub(wasm_i16x8_add(wasm_i16x8_add(h, h), l), a));
}

/* The terms d * sumi of four Q2_0 blocks at a (lanes: blocks), sumi = (0 + dy_0 * s_0) + dy_1 *
 * s_1 over each block's two Q8_0 blocks at b, in the reference's float order. */
static inline v128_t terms4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t sumi = wasm_f32x4_splat(0.0f);
  for (int q = 0; q < NQ8; q++) {
    const int c = XQS + 8 * q;
    const v128_t s = bq_hsum4_i32(code_sum(a + c, b + q * YS + YQS),
                                  code_sum(a + XS + c, b + (NQ8 + q) * YS + YQS),
                                  code_sum(a + 2 * XS + c, b + (2 * NQ8 + q) * YS + YQS),
                                  code_sum(a + 3 * XS + c, b + (3 * NQ8 + q) * YS + YQS));
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
BQ_DOT_PROTO(q2_0, q8_0, __simd128) {
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

/* matvec: activations prepared once per call, in the order the codes come out of their bytes. A
 * block's 16 bytes give plane l (l = 0..3: elements 4j + l, j = 0..15) as the bits 2l of each
 * byte, one u16 shift and a mask; the prepared block holds the same planes of its 64 activations
 * as int16, so each plane is two i32x4.dot_i16x8 against it, no reordering per row. Beside them,
 * per Q8_0 block its code sum (the sums are of code * q; code - 1 takes one sum of q off) and d,
 * by half: those of each block's first Q8_0 block, then of its second, so that four consecutive
 * blocks' values are one vector load. Row by row, the blocks' terms are the dot's (terms4), in the
 * dot's order. */
typedef struct {
  const int16_t *q;     /* 64 per block: plane l at 16 l */
  const int32_t *sum;   /* [h * nbp + i]: code sum of block i's Q8_0 block h */
  const float *d0, *d1; /* d of each block's first and second Q8_0 block */
} q2_prep;

static int prepare(const uint8_t *x, size_t nb, q2_prep *p) {
  const size_t nbp = (nb + 3) & ~(size_t)3;
  if (2 * nbp > BQ_PREP_MAX_BLOCKS + 4) return 0;
  int16_t *q = bq_prep_q;
  int32_t *sum = bq_prep_sum;
  float *d0 = bq_prep_d, *d1 = bq_prep_s;
  for (size_t i = 0; i < nbp; i++, q += QK) {
    if (i >= nb) {
      memset(q, 0, QK * sizeof *q);
      sum[i] = sum[nbp + i] = 0;
      d0[i] = d1[i] = 0.0f;
      continue;
    }
    const uint8_t *b = x + NQ8 * i * YS;
    /* The block's 64 codes in four vectors of 16, each regrouped by plane (bytes 4l..4l+3: its
     * elements 4j + l), then a 4x4 transpose of the 32-bit groups: plane l, positions 0..15. */
    const v128_t by_plane = wasm_i8x16_const(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    v128_t v[4];
    for (int k = 0; k < 4; k++)
      v[k] = wasm_i8x16_swizzle(wasm_v128_load(b + (k / 2) * YS + YQS + 16 * (k % 2)), by_plane);
    const v128_t t01l = wasm_i32x4_shuffle(v[0], v[1], 0, 4, 1, 5);
    const v128_t t23l = wasm_i32x4_shuffle(v[2], v[3], 0, 4, 1, 5);
    const v128_t t01h = wasm_i32x4_shuffle(v[0], v[1], 2, 6, 3, 7);
    const v128_t t23h = wasm_i32x4_shuffle(v[2], v[3], 2, 6, 3, 7);
    const v128_t planes[4] = {
        wasm_i64x2_shuffle(t01l, t23l, 0, 2), wasm_i64x2_shuffle(t01l, t23l, 1, 3),
        wasm_i64x2_shuffle(t01h, t23h, 0, 2), wasm_i64x2_shuffle(t01h, t23h, 1, 3)};
    for (int l = 0; l < 4; l++) {
      wasm_v128_store(q + 16 * l, wasm_i16x8_extend_low_i8x16(planes[l]));
      wasm_v128_store(q + 16 * l + 8, wasm_i16x8_extend_high_i8x16(planes[l]));
    }
    /* the code sum of each Q8_0 block: v[0], v[1] are the first's, v[2], v[3] the second's */
    for (int h = 0; h < NQ8; h++) {
      const v128_t s = wasm_i32x4_extadd_pairwise_i16x8(
          wasm_i16x8_add(wasm_i16x8_extadd_pairwise_i8x16(v[2 * h]),
                         wasm_i16x8_extadd_pairwise_i8x16(v[2 * h + 1])));
      const v128_t s2 = wasm_i32x4_add(s, wasm_i32x4_shuffle(s, s, 2, 3, 0, 1));
      wasm_v128_store32_lane(sum + h * nbp + i,
                             wasm_i32x4_add(s2, wasm_i32x4_shuffle(s2, s2, 1, 0, 3, 2)), 0);
    }
    d0[i] = bq_h2f_fast(bq_rd16(b));
    d1[i] = bq_h2f_fast(bq_rd16(b + YS));
  }
  p->q = bq_prep_q;
  p->sum = sum;
  p->d0 = d0;
  p->d1 = d1;
  return 1;
}

/* The int32 partial sums of code * q of the block at a against its prepared activations q: of its
 * first Q8_0 block (elements 0..31: positions 0..7 of each plane) in *s0, of its second in *s1. */
static inline void psums(const uint8_t *a, const int16_t *q, v128_t *s0, v128_t *s1) {
  const v128_t b = wasm_v128_load(a + XQS), m = wasm_i8x16_splat(3);
  v128_t lo = wasm_i32x4_splat(0), hi = lo;
  for (int l = 0; l < 4; l++, q += 16) {
    const v128_t c = wasm_v128_and(l ? wasm_u16x8_shr(b, 2 * l) : b, m);
    lo =
        wasm_i32x4_add(lo, wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(c), wasm_v128_load(q)));
    hi = wasm_i32x4_add(
        hi, wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(c), wasm_v128_load(q + 8)));
  }
  *s0 = lo;
  *s1 = hi;
}

/* terms4 against the prepared activations of blocks i..i+3. */
static inline v128_t pterms4(const bq_k *k, const uint8_t *a, const q2_prep *p, size_t i,
                             size_t nbp) {
  v128_t s0[4], s1[4];
  for (int b = 0; b < 4; b++) psums(a + b * XS, p->q + (i + b) * QK, &s0[b], &s1[b]);
  const v128_t c0 =
      wasm_i32x4_sub(bq_hsum4_i32(s0[0], s0[1], s0[2], s0[3]), wasm_v128_load(p->sum + i));
  const v128_t c1 =
      wasm_i32x4_sub(bq_hsum4_i32(s1[0], s1[1], s1[2], s1[3]), wasm_v128_load(p->sum + nbp + i));
  v128_t sumi = wasm_f32x4_splat(0.0f);
  sumi =
      wasm_f32x4_add(sumi, wasm_f32x4_mul(wasm_v128_load(p->d0 + i), wasm_f32x4_convert_i32x4(c0)));
  sumi =
      wasm_f32x4_add(sumi, wasm_f32x4_mul(wasm_v128_load(p->d1 + i), wasm_f32x4_convert_i32x4(c1)));
  return wasm_f32x4_mul(bq_h2f_x4(k, bq_load_u16x4(a, XS)), sumi);
}

BQ_MATVEC_PROTO(q2_0, q8_0, __simd128) {
  if (cols % QK) return BQ_EINVAL;
  const size_t nb = cols / QK, rb = nb * XS, nbp = (nb + 3) & ~(size_t)3;
  const uint8_t *wr = w;
  q2_prep p;
  if (!prepare(x, nb, &p)) {
    for (size_t r = 0; r < rows; r++, wr += rb) {
      float acc[BQ_ACC_LANES] = {0};
      bq_q2_0_dot_q8_0__simd128(wr, x, cols, acc);
      y[r] = bq_acc_sum__simd128(acc);
    }
    return BQ_OK;
  }
  const bq_k k = bq_consts();
  for (size_t r = 0; r < rows; r++, wr += rb) {
    v128_t sumf = wasm_f32x4_splat(0.0f);
    size_t i = 0;
    for (; i + 4 <= nb; i += 4)
      sumf = bq_add_lanes_in_order(sumf, pterms4(&k, wr + i * XS, &p, i, nbp));
    if (i < nb) {
      uint8_t ta[4 * XS];
      memset(ta, 0, sizeof ta);
      memcpy(ta, wr + i * XS, (nb - i) * XS);
      sumf = bq_add_lanes_in_order(sumf, bq_keep_lanes(pterms4(&k, ta, &p, i, nbp), nb - i));
    }
    /* the dot's state sum of (sumf, 0, 0, 0): sumf, never -0 */
    wasm_v128_store32_lane(y + r, sumf, 0);
  }
  return BQ_OK;
}

/* The codes of four values v = x * id, as the reference's clamp((int)roundf(v) + 1, 0, 3): 1, plus
 * 1 for v >= 0.5 and 1 more for v >= 1.5, less 1 for v <= -0.5 (roundf rounds half away from zero);
 * and 0 where the reference's (int) cast gives INT32_MIN, for NaN and v >= 2^31 (bq_cvt_i32; below
 * -2^31 the clamp gives 0 anyway). */
static inline v128_t codes4(v128_t v) {
  const v128_t up1 = wasm_f32x4_ge(v, wasm_f32x4_splat(0.5f));
  const v128_t up2 = wasm_f32x4_ge(v, wasm_f32x4_splat(1.5f));
  const v128_t down = wasm_f32x4_le(v, wasm_f32x4_splat(-0.5f));
  const v128_t c =
      wasm_i32x4_add(wasm_i32x4_sub(wasm_i32x4_sub(wasm_i32x4_splat(1), up1), up2), down);
  return wasm_v128_and(c, wasm_f32x4_lt(v, wasm_f32x4_splat(2147483648.0f)));
}

/* Quantize: d = max |x| over the values that are not NaN (the reference's |x| > amax never takes a
 * NaN, and the lanes' maxima combine in any order), id = 1 / d as the reference, then each
 * element's code, four to a byte: the codes of 16 elements narrowed to bytes, and in each u32 lane
 * c0 | c1 << 8 | c2 << 16 | c3 << 24 folded to c0 | c1 << 2 | c2 << 4 | c3 << 6 in its low byte. */
BQ_QUANTIZE_PROTO(q2_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const bq_k k = bq_consts();
  uint8_t *out = y;
  for (size_t i = 0; i < n / QK; i++, x += QK, out += XS) {
    v128_t m = wasm_f32x4_splat(0.0f);
    for (int j = 0; j < QK; j += 4) m = wasm_f32x4_pmax(m, wasm_f32x4_abs(wasm_v128_load(x + j)));
    m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(m, m, 2, 3, 0, 1));
    m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
    /* m: the max in every lane; id = 1 / m, or 0 where m is 0 (m is never negative or NaN) */
    const v128_t id = wasm_v128_andnot(wasm_f32x4_div(wasm_f32x4_splat(1.0f), m),
                                       wasm_f32x4_eq(m, wasm_f32x4_splat(0.0f)));
    wasm_v128_store16_lane(out, bq_f2h_x4(&k, m), 0);
    v128_t packed[4];
    for (int g = 0; g < 4; g++) {
      const float *xg = x + 16 * g;
      v128_t c[4];
      for (int j = 0; j < 4; j++) c[j] = codes4(wasm_f32x4_mul(wasm_v128_load(xg + 4 * j), id));
      const v128_t b = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(c[0], c[1]),
                                               wasm_i16x8_narrow_i32x4(c[2], c[3]));
      packed[g] = wasm_v128_or(wasm_v128_or(b, wasm_u32x4_shr(b, 6)),
                               wasm_v128_or(wasm_u32x4_shr(b, 12), wasm_u32x4_shr(b, 18)));
    }
    /* the low byte of each u32 lane, 16 of them in order */
    const v128_t lo01 = wasm_i8x16_shuffle(packed[0], packed[1], 0, 4, 8, 12, 16, 20, 24, 28, 0, 0,
                                           0, 0, 0, 0, 0, 0);
    const v128_t lo23 = wasm_i8x16_shuffle(packed[2], packed[3], 0, 4, 8, 12, 16, 20, 24, 28, 0, 0,
                                           0, 0, 0, 0, 0, 0);
    wasm_v128_store(out + XQS, wasm_i64x2_shuffle(lo01, lo23, 0, 2));
  }
  return BQ_OK;
}
