/* Helpers shared by the SIMD128 Q2_K, Q3_K and Q6_K kernels (q2_K.c, q3_K.c, q6_K.c).
 *
 * All three formats place element e = 128h + 32g + l (h 0..1, g 0..3, l 0..31) of a super-block
 * at bit field g of byte l of its half's code bytes, and have a scale per sub-block of 16
 * elements. So the kernels work on 16 code bytes at a time: the 16 elements 128h + 32g + 16c +
 * (0..15), which are sub-block j = 8h + 2g + c and 16 consecutive outputs.
 *
 * Dots with Q8_K: the codes (0..63, unsigned bytes) are split into u16 lanes by a mask (even
 * elements) and a shift (odd elements) and multiplied with the activations widened once to int16
 * in that order ("pair order": per sub-block, its 8 even then its 8 odd elements), with
 * i32x4.dot_i16x8_s. Each sub-block's partial sums (i32x4, every lane at most 4 * 63 * 128 <
 * 2^15 in magnitude) are narrowed to i16, two sub-blocks to a vector, and multiplied by their
 * scales with one more i32x4.dot_i16x8_s (kq_scale4), into one i32x4 accumulator per super-block:
 * its lane sum is the super-block's exact integer sum. A format's offset (Q6_K's -32, Q3_K's -4)
 * is taken out once with the activation sums of each sub-block, computed from the codes by the
 * preparation (never from Q8_K's bsums, which the reference does not read for these two formats
 * and which may be anything).
 *
 * Dot state: each super-block's float term is added to acc[0], in order, so a dot fed in pieces
 * cut at super-block boundaries equals the uncut one, and a matvec row (the same terms from a
 * zero state, summed with bq_acc_sum__simd128) equals the dot. */
#ifndef BQ_KQ236_H
#define BQ_KQ236_H

#include <wasm_simd128.h>

#include "../kquants.h"
#include "simd.h" /* BQ_TOP, BQ_LOW, bq_top_bytes_mul */

BQ_DEQUANTIZE_PROTO(q2_K, __simd128);
BQ_DEQUANTIZE_PROTO(q3_K, __simd128);
BQ_DEQUANTIZE_PROTO(q6_K, __simd128);
BQ_DOT_PROTO(q2_K, q8_K, __simd128);
BQ_DOT_PROTO(q3_K, q8_K, __simd128);
BQ_DOT_PROTO(q6_K, q8_K, __simd128);
BQ_DOT_PROTO(q2_K, f32, __simd128);
BQ_DOT_PROTO(q3_K, f32, __simd128);
BQ_DOT_PROTO(q6_K, f32, __simd128);
BQ_MATVEC_PROTO(q2_K, q8_K, __simd128);
BQ_MATVEC_PROTO(q3_K, q8_K, __simd128);
BQ_MATVEC_PROTO(q6_K, q8_K, __simd128);
float bq_acc_sum__simd128(const float *acc);

/* Vector constants, loaded from memory once per call (src/simd128/consts.c says why). */
typedef struct {
  uint32_t nib[4], m30[4], m03[4], m04[4], lo8[4], w03[4], q3mul[4], one16[4], b32[4], lo64[4],
      hi64[4];
} kq_const_table;
extern kq_const_table bq_kq236_consts; /* q6_K.c; not const, so the loads are not folded */

typedef struct {
  v128_t nib, m30, m03, m04, lo8, w03, q3mul, one16, b32, lo64, hi64;
} kq_k;

#define KQ_LD(f) wasm_v128_load(bq_kq236_consts.f)
static inline kq_k kq_consts(void) {
  const kq_k k = {KQ_LD(nib),   KQ_LD(m30),   KQ_LD(m03), KQ_LD(m04),  KQ_LD(lo8), KQ_LD(w03),
                  KQ_LD(q3mul), KQ_LD(one16), KQ_LD(b32), KQ_LD(lo64), KQ_LD(hi64)};
  return k;
}

/* Activations of one super-block in pair order, and the sum of each sub-block's 16 codes (at most
 * 16 * 128 in magnitude). */
typedef struct {
  int16_t q[QK_K];
  int16_t sum[QK_K / 16];
} kq_act;

/* Widens the 256 codes of the Q8_K block at p into a (pair order: even bytes sign-extended within
 * u16 lanes by a shift pair, odd ones by one arithmetic shift) and sums each sub-block. */
static inline void kq_prepare(const kq_k *k, const uint8_t *p, kq_act *a) {
  const uint8_t *q = p + offsetof(block_q8_K, qs);
  v128_t s[16];
  for (int j = 0; j < 16; j++) {
    const v128_t v = wasm_v128_load(q + 16 * j);
    const v128_t e = wasm_i16x8_shr(wasm_i16x8_shl(v, 8), 8), o = wasm_i16x8_shr(v, 8);
    wasm_v128_store(a->q + 16 * j, e);
    wasm_v128_store(a->q + 16 * j + 8, o);
    s[j] = wasm_i32x4_dot_i16x8(wasm_i16x8_add(e, o), k->one16); /* |e + o| <= 256 */
  }
  v128_t t[4];
  for (int i = 0; i < 4; i++) {
    const v128_t *u = s + 4 * i;
    const v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(u[0], u[1], 0, 4, 1, 5),
                                     wasm_i32x4_shuffle(u[0], u[1], 2, 6, 3, 7));
    const v128_t cd = wasm_i32x4_add(wasm_i32x4_shuffle(u[2], u[3], 0, 4, 1, 5),
                                     wasm_i32x4_shuffle(u[2], u[3], 2, 6, 3, 7));
    t[i] = wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5),
                          wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
  }
  wasm_v128_store(a->sum, wasm_i16x8_narrow_i32x4(t[0], t[1])); /* exact: |sum| <= 2048 */
  wasm_v128_store(a->sum + 8, wasm_i16x8_narrow_i32x4(t[2], t[3]));
}

/* The sum of the four lanes in every lane (exact, wrapping as the reference's int32 sums do not
 * need to). Kept in a vector: the super-block's float term is formed lane-wise from it, and only
 * a dot's final state is read out of lane 0, after its loop. */
static inline v128_t kq_hsum(v128_t v) {
  v = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
}

/* Partial sums (i32x4) of the 16 codes c (bytes 0..63) times the activations a (pair order). */
static inline v128_t kq_dot16(const kq_k *k, v128_t c, const int16_t *a) {
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_and(c, k->lo8), wasm_v128_load(a)),
                        wasm_i32x4_dot_i16x8(wasm_u16x8_shr(c, 8), wasm_v128_load(a + 8)));
}

/* The term loops take a super-block in four passes hc = 2h + c (h, c = 0, 1), each over the 16
 * code bytes of chunk c of half h: sub-blocks j = 8h + 2g + c, g = 0..3. kq_pass_order puts the
 * scale bytes (byte j: sub-block j) in that order, pass hc's four in bytes 4hc..4hc + 3; a pass
 * reads its scales from bytes 0..3 and kq_next_pass moves the next pass's there. */
static inline v128_t kq_pass_order(v128_t s) {
  return wasm_i8x16_shuffle(s, s, 0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
}
static inline v128_t kq_next_pass(v128_t r) { return wasm_i32x4_shuffle(r, r, 1, 2, 3, 0); }

/* The scaled sum, as i32x4 partial sums, of the four sub-blocks of a pass: p[g], the partial sums
 * of sub-block g of the pass (|lane| < 2^15, so narrowing to i16 is exact), times its scale, byte g
 * of r (kq_pass_order), signed bytes (sgn) or unsigned ones: two sub-blocks per i16 vector against
 * [scale x4, scale x4], one i32x4.dot_i16x8_s each. */
static inline v128_t kq_scale4(const v128_t p[4], v128_t r, int sgn) {
  v128_t s01, s23;
  if (sgn) {
    s01 =
        wasm_i16x8_shr(wasm_i8x16_swizzle(r, wasm_i8x16_const(-128, 0, -128, 0, -128, 0, -128, 0,
                                                              -128, 1, -128, 1, -128, 1, -128, 1)),
                       8);
    s23 =
        wasm_i16x8_shr(wasm_i8x16_swizzle(r, wasm_i8x16_const(-128, 2, -128, 2, -128, 2, -128, 2,
                                                              -128, 3, -128, 3, -128, 3, -128, 3)),
                       8);
  } else {
    s01 = wasm_i8x16_swizzle(r, wasm_i8x16_const(0, -128, 0, -128, 0, -128, 0, -128, 1, -128, 1,
                                                 -128, 1, -128, 1, -128));
    s23 = wasm_i8x16_swizzle(r, wasm_i8x16_const(2, -128, 2, -128, 2, -128, 2, -128, 3, -128, 3,
                                                 -128, 3, -128, 3, -128));
  }
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_narrow_i32x4(p[0], p[1]), s01),
                        wasm_i32x4_dot_i16x8(wasm_i16x8_narrow_i32x4(p[2], p[3]), s23));
}

/* sum over sub-blocks j of sc[j] * (activation sum of j), as i32x4 partial sums; sc: the 16 signed
 * scale bytes in sub-block order. */
static inline v128_t kq_act_scaled(const kq_act *a, v128_t sc) {
  return wasm_i32x4_add(
      wasm_i32x4_dot_i16x8(wasm_v128_load(a->sum), wasm_i16x8_extend_low_i8x16(sc)),
      wasm_i32x4_dot_i16x8(wasm_v128_load(a->sum + 8), wasm_i16x8_extend_high_i8x16(sc)));
}

/* Lane i of v in every lane (i is a constant once the callers' loops are unrolled). */
static inline v128_t kq_lane(v128_t v, int i) {
  switch (i & 3) {
    case 0:
      return wasm_i32x4_shuffle(v, v, 0, 0, 0, 0);
    case 1:
      return wasm_i32x4_shuffle(v, v, 1, 1, 1, 1);
    case 2:
      return wasm_i32x4_shuffle(v, v, 2, 2, 2, 2);
    default:
      return wasm_i32x4_shuffle(v, v, 3, 3, 3, 3);
  }
}

/* The sum of four product vectors, in a fixed tree. */
static inline v128_t kq_sum4(v128_t a, v128_t b, v128_t c, v128_t d) {
  return wasm_f32x4_add(wasm_f32x4_add(a, b), wasm_f32x4_add(c, d));
}

/* y[r] for a matvec row whose terms went, in order, into every lane of s (from 0): the row's dot
 * state (s in acc[0], zeros after) summed as the dot's would be. */
static inline float kq_row_sum(v128_t s) {
  float acc[BQ_ACC_LANES] = {0};
  wasm_v128_store(acc, wasm_i32x4_shuffle(s, wasm_f32x4_splat(0), 0, 4, 5, 6));
  return bq_acc_sum__simd128(acc);
}

/* Beyond this |d * yd| a reference lane term dd * lane[l] (|lane| < 2^25) may overflow, so a Q3_K
 * or Q6_K super-block's term is formed as ggml forms it (kq_lanes_term) and Inf/NaN come out as
 * there; below it the eight terms and their sum are finite and dd * isum is within rounding. */
#define KQ_DD_BIG 0x1p97f

/* ggml's float term of one super-block: element e's integer product w[e] * q8[e] summed into lane
 * e % 8, then dd * lane[0] + ... + dd * lane[7], in order. */
static inline float kq_lanes_term(const int32_t w[QK_K], const uint8_t *yb, float dd) {
  const int8_t *q = (const int8_t *)(yb + offsetof(block_q8_K, qs));
  int32_t lane[8] = {0};
  for (int e = 0; e < QK_K; e++) lane[e % 8] += w[e] * q[e];
  float t = dd * (float)lane[0];
  for (int l = 1; l < 8; l++) t += dd * (float)lane[l];
  return t;
}

/* For Q3_K and Q6_K (one fp16 d): the float term of a super-block in every lane, (d * yd) * ISUM,
 * with d * yd formed as the reference does and a huge, Inf or NaN one through the file's big_term
 * (kq_lanes_term); then the type's dot and matvec on that term. ISUM(k, b, yb, a) is the block's
 * exact integer sum; TERM names the term, SUFFIX the kernels (__simd128, __relaxed). */
#define KQ_D_KERNELS(t, TERM, ISUM, SUFFIX)                                                        \
  static inline v128_t TERM(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) { \
    float yd;                                                                                      \
    memcpy(&yd, yb + offsetof(block_q8_K, d), 4);                                                  \
    const float dd = bq_h2f_fast(bq_rd16(b + XD)) * yd;                                            \
    if (__builtin_expect(!(fabsf(dd) < KQ_DD_BIG), 0))                                             \
      return wasm_f32x4_splat(big_term(b, yb, dd));                                                \
    return wasm_f32x4_mul(wasm_f32x4_splat(dd), wasm_f32x4_convert_i32x4(ISUM(k, b, yb, a)));      \
  }                                                                                                \
  BQ_DOT_PROTO(t, q8_K, SUFFIX) {                                                                  \
    if (n % QK_K) return BQ_EINVAL;                                                                \
    kq_dot(x, y, n / QK_K, XS, acc, TERM);                                                         \
    return BQ_OK;                                                                                  \
  }                                                                                                \
  BQ_MATVEC_PROTO(t, q8_K, SUFFIX) {                                                               \
    return kq_matvec(w, rows, cols, x, y, XS, TERM, bq_##t##_dot_q8_K##SUFFIX);                    \
  }

/* Activations of a matvec call, prepared once (kq_prepare per super-block) into the calling
 * thread's scratch (q6_K.c, threads.c); no kernel allocates. Longer rows prepare per super-block,
 * as the dots do. */
#define KQ_PREP_MAX 64 /* super-blocks: 16384 columns, 34 KB */
extern _Thread_local kq_act *bq_kq236_prep;

/* Inlined into the kernels, so that the term passed by pointer is called directly. */
#define KQ_INLINE static inline __attribute__((always_inline))

/* A format's float term of one super-block at b, in every lane, against the Q8_K block at yb
 * whose codes are prepared in a. */
typedef v128_t (*kq_term_fn)(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a);

/* The dot of nb super-blocks (xs bytes each) at b with the Q8_K blocks at yb: each block's
 * activations prepared, its term added to acc[0], in order. */
KQ_INLINE void kq_dot(const uint8_t *b, const uint8_t *yb, size_t nb, size_t xs, float *acc,
                      kq_term_fn term) {
  const kq_k k = kq_consts();
  v128_t s = wasm_v128_load32_splat(acc);
  for (size_t i = 0; i < nb; i++, b += xs, yb += sizeof(block_q8_K)) {
    kq_act a;
    kq_prepare(&k, yb, &a);
    s = wasm_f32x4_add(s, term(&k, b, yb, &a));
  }
  acc[0] = wasm_f32x4_extract_lane(s, 0);
}

/* y[r] = the dot of row r (rows of cols / QK_K super-blocks of xs bytes), from the same terms on
 * activations prepared once; the dot kernel per row when the rows are too long to prepare. */
KQ_INLINE int kq_matvec(const uint8_t *w, size_t rows, size_t cols, const uint8_t *x, float *y,
                        size_t xs, kq_term_fn term,
                        int (*dot)(const void *, const void *, size_t, float *)) {
  if (cols % QK_K) return BQ_EINVAL;
  const size_t nb = cols / QK_K, ys = sizeof(block_q8_K);
  if (nb > KQ_PREP_MAX) {
    for (size_t r = 0; r < rows; r++) {
      float acc[BQ_ACC_LANES] = {0};
      dot(w + r * nb * xs, x, cols, acc);
      y[r] = bq_acc_sum__simd128(acc);
    }
    return BQ_OK;
  }
  const kq_k k = kq_consts();
  for (size_t i = 0; i < nb; i++) kq_prepare(&k, x + i * ys, &bq_kq236_prep[i]);
  for (size_t r = 0; r < rows; r++, w += nb * xs) {
    v128_t s = wasm_f32x4_splat(0);
    for (size_t i = 0; i < nb; i++)
      s = wasm_f32x4_add(s, term(&k, w + i * xs, x + i * ys, &bq_kq236_prep[i]));
    y[r] = kq_row_sum(s);
  }
  return BQ_OK;
}

#endif
