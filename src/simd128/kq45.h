/* Helpers shared by the SIMD128 Q4_K and Q5_K kernels (q4_K.c, q5_K.c) and the Q8_K activation
 * code they pair with (q8_K.c).
 *
 * Dot state: each super-block adds one vector of four float terms to acc[0..3] (the other
 * BQ_ACC_LANES stay zero), so a dot cut at super-block boundaries equals the uncut one bit for bit,
 * and a matvec row, built from the same terms from a zero state, equals the dot of that row. A
 * call that leaves the state not all finite (an Inf or NaN scale) is redone by the reference
 * (bq_kq_redo), so NaN, +Inf and -Inf come out where ggml's do. The integer parts are exact: a lane
 * holds at most 2 * 63 * 15 * 127 * 32 < 2^24 (Q4_K) or 2 * 63 * 31 * 127 * 32 < 2^24
 * (Q5_K: 15.9M), so converting them to float is exact too. */
#ifndef BQ_SIMD_KQ45_H
#define BQ_SIMD_KQ45_H

#include "../kquants.h"
#include "simd.h"

/* Everything here is inlined into the kernels, so that loop counters become the constants the
 * shifts and lane shuffles need (clang 14 scalarised a shift chosen at run time between a left
 * and a right one) and the kernels passed by pointer are called directly. */
#define BQ_KQ_INLINE static inline __attribute__((always_inline))

/* The kernels of these files, until kernels.inc lists them (bq.h then declares them again). */
BQ_DEQUANTIZE_PROTO(q4_K, __simd128);
BQ_DOT_PROTO(q4_K, q8_K, __simd128);
BQ_DOT_PROTO(q4_K, f32, __simd128);
BQ_MATVEC_PROTO(q4_K, q8_K, __simd128);
BQ_DEQUANTIZE_PROTO(q5_K, __simd128);
BQ_DOT_PROTO(q5_K, q8_K, __simd128);
BQ_DOT_PROTO(q5_K, f32, __simd128);
BQ_MATVEC_PROTO(q5_K, q8_K, __simd128);
BQ_QUANTIZE_PROTO(q8_K, __simd128);

/* Vector constants of these kernels, in memory for the reason consts.c gives (q8_K.c). */
typedef struct {
  uint32_t lo8[4], b10[4], sc_lo[4], b30[4];
} bq_kq_const_table;
extern bq_kq_const_table bq_kq_consts_mem;

typedef struct {
  v128_t lo8;   /* 0x00FF in each u16 lane: the even byte */
  v128_t b10;   /* 0x10 in each byte: the fifth bit of a Q5 code */
  v128_t sc_lo; /* bq_kq_scales: the bits of the packed scale words that stay in place */
  v128_t b30;   /* 0x30 in each byte: bits 4-5 */
} bq_kq;

BQ_KQ_INLINE bq_kq bq_kq_consts(void) {
  const bq_kq c = {wasm_v128_load(bq_kq_consts_mem.lo8), wasm_v128_load(bq_kq_consts_mem.b10),
                   wasm_v128_load(bq_kq_consts_mem.sc_lo), wasm_v128_load(bq_kq_consts_mem.b30)};
  return c;
}

/* Swizzle indices placing bytes a..a+3 (mins) each into two i16 lanes, zero high bytes. */
#define BQ_KQ_DUP(a)                                                                           \
  wasm_i8x16_const((a), -128, (a), -128, (a) + 1, -128, (a) + 1, -128, (a) + 2, -128, (a) + 2, \
                   -128, (a) + 3, -128, (a) + 3, -128)

/* The 12 packed scale bytes of a Q4_K/Q5_K super-block at s (read as 16: the block goes on) as one
 * vector of bytes: the 6-bit scales of sub-blocks 0..7 in bytes 0..7 and their mins in bytes 8..15
 * (bq_scale_min_k4 for all j at once). With w0..w2 the three scale words, the i32 lanes are
 * [w0 & 0x3F.., (w2 & 0x0F..) | hi(w0), w1 & 0x3F.., (w2 >> 4 & 0x0F..) | hi(w1)], hi(w) being
 * the top 2 bits of each byte of w moved to bits 4-5: the words are placed in lanes by constant
 * swizzles (zeros where a term does not apply), so the whole unpacking is vector code. */
BQ_KQ_INLINE v128_t bq_kq_scales(const bq_k *k, const bq_kq *c, const uint8_t *s) {
  const v128_t v = wasm_v128_load(s);
  const v128_t a = wasm_i8x16_swizzle(
      v, wasm_i8x16_const(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, -128, -128, -128, -128));
  const v128_t m =
      wasm_i8x16_swizzle(v, wasm_i8x16_const(-128, -128, -128, -128, -128, -128, -128, -128, -128,
                                             -128, -128, -128, 8, 9, 10, 11));
  const v128_t h = wasm_i8x16_swizzle(
      v, wasm_i8x16_const(-128, -128, -128, -128, 0, 1, 2, 3, -128, -128, -128, -128, 4, 5, 6, 7));
  return wasm_v128_or(
      wasm_v128_or(wasm_v128_and(a, c->sc_lo), wasm_v128_and(wasm_u32x4_shr(m, 4), k->nib)),
      wasm_v128_and(wasm_u32x4_shr(h, 2), c->b30));
}

/* Scale slots: a super-block's d * scale and dmin * min are stored through bq_kq_slot and read back
 * splat through bq_kq_slot_alias, which the compiler cannot prove equal, so each splat stays one
 * load (no vector ALU op) instead of a lane shuffle (as simd.h's scale slots; q8_K.c). Both point
 * at 32 floats of the calling thread's scratch (threads.c). */
extern _Thread_local float *bq_kq_slot, *bq_kq_slot_alias;

/* Stores d * scale (slots 0..7) and dmin * min (8..15) of the 8 sub-blocks, each one rounding as
 * the reference's d * (float)sc and dmin * (float)m, and d * scale * 2^-4 (16..23; exact: d * scale
 * is 0 or at least 2^-24, and a NaN keeps its bits). Returns where to read them. */
BQ_KQ_INLINE const float *bq_kq_dl_ml(v128_t S, float d, float dmin) {
  const v128_t vd = wasm_f32x4_splat(d), vm = wasm_f32x4_splat(dmin),
               x16 = wasm_f32x4_splat(0x1p-4f);
  const v128_t dl0 = wasm_f32x4_mul(vd, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(S, BQ_LOW(0))));
  const v128_t dl1 = wasm_f32x4_mul(vd, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(S, BQ_LOW(4))));
  wasm_v128_store(bq_kq_slot, dl0);
  wasm_v128_store(bq_kq_slot + 4, dl1);
  wasm_v128_store(bq_kq_slot + 8,
                  wasm_f32x4_mul(vm, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(S, BQ_LOW(8)))));
  wasm_v128_store(bq_kq_slot + 12,
                  wasm_f32x4_mul(vm, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(S, BQ_LOW(12)))));
  wasm_v128_store(bq_kq_slot + 16, wasm_f32x4_mul(dl0, x16));
  wasm_v128_store(bq_kq_slot + 20, wasm_f32x4_mul(dl1, x16));
  return bq_kq_slot_alias;
}

/* Weights dl * q - ml of 16 byte codes q (0..31) into w[0..3], each two roundings as the
 * reference (q converts exactly). */
BQ_KQ_INLINE void bq_kq_weights16(v128_t q, v128_t dl, v128_t ml, v128_t *w) {
  w[0] = wasm_f32x4_sub(
      wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(q, BQ_LOW(0))), dl), ml);
  w[1] = wasm_f32x4_sub(
      wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(q, BQ_LOW(4))), dl), ml);
  w[2] = wasm_f32x4_sub(
      wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(q, BQ_LOW(8))), dl), ml);
  w[3] = wasm_f32x4_sub(
      wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(q, BQ_LOW(12))), dl), ml);
}

/* Activations of a dot, as i16 lanes in the order the weight kernels take their codes from u16
 * lanes: for each run of 16 elements, the 8 even ones then the 8 odd ones. A plain dot splits the
 * Q8_K bytes on the fly (sign-extending within u16 lanes: 3 operations per 16); a matvec loads
 * them prepared once per call (bq_kq_prepare). */
typedef struct {
  const int8_t *q;  /* Q8_K codes (prepared == NULL) */
  const int16_t *p; /* prepared codes of the super-block */
} bq_kq_act;

BQ_KQ_INLINE void bq_kq_act16(bq_kq_act a, int g, v128_t *even, v128_t *odd) {
  if (a.p) {
    *even = wasm_v128_load(a.p + 16 * g);
    *odd = wasm_v128_load(a.p + 16 * g + 8);
  } else {
    const v128_t v = wasm_v128_load(a.q + 16 * g);
    *even = wasm_i16x8_shr(wasm_i16x8_shl(v, 8), 8);
    *odd = wasm_i16x8_shr(v, 8);
  }
}

/* The four float terms of one super-block: (d * yd) * isum - (dmin * yd) * msum, lane by lane,
 * from the exact integer lanes P[j] of sub-block j's products (any lane split), the scales S
 * (bq_kq_scales) and the activations' bsums. isum lane l = sc_l * sum(P_l) + sc_{l+4} *
 * sum(P_{l+4}); msum lane l = min_l * (bsums 2l, 2l+1) + min_{l+4} * (bsums 2l+8, 2l+9). */
BQ_KQ_INLINE v128_t bq_kq_terms(const v128_t P[8], v128_t S, const uint8_t *bsums, float d,
                                float dmin) {
  const v128_t sc0 = wasm_i8x16_swizzle(S, BQ_LOW(0)), sc1 = wasm_i8x16_swizzle(S, BQ_LOW(4));
  const v128_t isum = wasm_i32x4_add(wasm_i32x4_mul(bq_hsum4_i32(P[0], P[1], P[2], P[3]), sc0),
                                     wasm_i32x4_mul(bq_hsum4_i32(P[4], P[5], P[6], P[7]), sc1));
  const v128_t msum = wasm_i32x4_add(
      wasm_i32x4_dot_i16x8(wasm_v128_load(bsums), wasm_i8x16_swizzle(S, BQ_KQ_DUP(8))),
      wasm_i32x4_dot_i16x8(wasm_v128_load(bsums + 16), wasm_i8x16_swizzle(S, BQ_KQ_DUP(12))));
  return wasm_f32x4_sub(wasm_f32x4_mul(wasm_f32x4_splat(d), wasm_f32x4_convert_i32x4(isum)),
                        wasm_f32x4_mul(wasm_f32x4_splat(dmin), wasm_f32x4_convert_i32x4(msum)));
}

/* Prepared Q8_K activations of one matvec call: per super-block, the codes in bq_kq_act order
 * (QK_K i16) and d. */
typedef struct {
  const int16_t *q;
  const float *d;
} bq_kq_prep;

/* The most super-blocks bq_kq_prepare takes (131072 columns). */
#define BQ_KQ_PREP_MAX 512
/* Where bq_kq_prepare writes: the calling thread's scratch (q8_K.c, threads.c). */
extern _Thread_local int16_t *bq_kq_prep_q;
extern _Thread_local float *bq_kq_prep_d;

/* Prepares nb Q8_K blocks at x into the calling thread's scratch (valid until its next call); 0
 * if too many. */
int bq_kq_prepare(const uint8_t *x, size_t nb, bq_kq_prep *out);

/* The sum of a row's dot state, exactly as the dot's result is read (bq_acc_sum__simd128). */
BQ_KQ_INLINE float bq_kq_row_sum(v128_t sum) {
  float acc[BQ_ACC_LANES] = {0};
  wasm_v128_store(acc, sum);
  return bq_acc_sum__simd128(acc);
}

/* The weights of a super-block, sub-blocks 2s and 2s+1 (elements 64s..64s+63, 16 vectors),
 * bit-exact with the reference; sl: the super-block's scale slots (bq_kq_dl_ml). */
typedef void (*bq_kq_pair_fn)(const bq_k *k, const bq_kq *c, const uint8_t *p, const float *sl,
                              int s, v128_t st[2], v128_t w[16]);

/* A super-block's scale slots. */
typedef const float *(*bq_kq_slots_fn)(const bq_k *k, const bq_kq *c, const uint8_t *p);

/* A super-block's four dot terms against Q8_K activations act with scale yd and bsums. */
typedef v128_t (*bq_kq_terms_fn)(const bq_k *k, const bq_kq *c, const uint8_t *p, bq_kq_act act,
                                 float yd, const uint8_t *bsums);

/* The loops over sub-block pairs are not unrolled: each pass stores its 256 bytes in one basic
 * block, so the output is written in ascending order across a super-block (unrolled, clang
 * schedules the 64 stores of a super-block backwards, slower once the output exceeds the caches).
 * Within a pass too clang emits the 16 stores last to first; a compiler barrier after each keeps
 * them in ascending order (BQ_STORE_ORDER, simd.h; Q4_K at 16M weights: 5% faster, 2% for Q5_K;
 * the same in L2). */
BQ_KQ_INLINE void bq_kq_dequantize(const uint8_t *p, float *y, size_t nb, size_t xs, size_t qh,
                                   bq_kq_slots_fn slots, bq_kq_pair_fn pair) {
  const bq_k k = bq_consts();
  const bq_kq c = bq_kq_consts();
  const size_t run = BQ_TOUCH_WEIGHTS / QK_K;
  for (size_t i = 0; i < nb; i++, p += xs, y += QK_K) {
    bq_touch_run(p, i, nb, run, xs); /* simd.h */
    const float *sl = slots(&k, &c, p);
    v128_t st[2] = {wasm_v128_load(p + qh), wasm_v128_load(p + qh + 16)};
    _Pragma("clang loop unroll(disable)") for (int s = 0; s < 4; s++) {
      v128_t w[16];
      pair(&k, &c, p, sl, s, st, w);
      for (int j = 0; j < 16; j++) {
        wasm_v128_store(y + 64 * s + 4 * j, w[j]);
        BQ_STORE_ORDER(); /* simd.h */
      }
    }
  }
}

BQ_KQ_INLINE void bq_kq_dot_f32(const uint8_t *p, const float *v, size_t nb, size_t xs, size_t qh,
                                float *acc, bq_kq_slots_fn slots, bq_kq_pair_fn pair) {
  const bq_k k = bq_consts();
  const bq_kq c = bq_kq_consts();
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < nb; i++, p += xs, v += QK_K) {
    const float *sl = slots(&k, &c, p);
    v128_t st[2] = {wasm_v128_load(p + qh), wasm_v128_load(p + qh + 16)};
    v128_t q[4] = {wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f),
                   wasm_f32x4_splat(0.0f)};
    _Pragma("clang loop unroll(disable)") for (int s = 0; s < 4; s++) {
      v128_t w[16];
      pair(&k, &c, p, sl, s, st, w);
      for (int j = 0; j < 16; j++)
        q[j % 4] =
            wasm_f32x4_add(q[j % 4], wasm_f32x4_mul(w[j], wasm_v128_load(v + 64 * s + 4 * j)));
    }
    sum =
        wasm_f32x4_add(sum, wasm_f32x4_add(wasm_f32x4_add(q[0], q[1]), wasm_f32x4_add(q[2], q[3])));
  }
  wasm_v128_store(acc, sum);
}

/* The reference dot of a pair (bq_<t>_dot_q8_K__ref). */
typedef int (*bq_kq_ref_fn)(const void *x, const void *y, size_t n, float *acc);

/* Whether every lane of v is finite. */
BQ_KQ_INLINE int bq_kq_finite(v128_t v) {
  return wasm_i32x4_all_true(wasm_f32x4_lt(wasm_f32x4_abs(v), wasm_f32x4_splat(INFINITY)));
}

/* A dot call whose state comes out not all finite: where a scale product is Inf or NaN, ggml's
 * result is NaN or an infinity depending on which of its own integer sums are 0 and on their
 * signs (it multiplies eight lanes of its own split, and the mins once by their total), which four
 * lanes of another split cannot tell. So the call's part (n elements at x, y) is redone by the
 * reference, in ggml's order, and the state becomes one lane: the lane sum of the state the call
 * started from plus that part, zeros after. A dot cut anywhere then ends in the same state as the
 * uncut one up to a NaN's bits, and every later call of a non-finite state takes this path too.
 * The test is one per call, after the loop. */
__attribute__((noinline, cold)) static v128_t bq_kq_redo(const float *from, const uint8_t *x,
                                                         const uint8_t *y, size_t n,
                                                         bq_kq_ref_fn ref) {
  float part[BQ_ACC_LANES] = {0};
  ref(x, y, n, part);
  return wasm_f32x4_make(bq_acc_sum__simd128(from) + bq_acc_sum__ref(part), 0.0f, 0.0f, 0.0f);
}

BQ_KQ_INLINE void bq_kq_dot(const uint8_t *p, const uint8_t *b, size_t nb, size_t xs, float *acc,
                            bq_kq_terms_fn terms, bq_kq_ref_fn ref) {
  const bq_k k = bq_consts();
  const bq_kq c = bq_kq_consts();
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < nb; i++, p += xs, b += sizeof(block_q8_K)) {
    float yd;
    memcpy(&yd, b + offsetof(block_q8_K, d), sizeof yd);
    const bq_kq_act act = {(const int8_t *)(b + offsetof(block_q8_K, qs)), NULL};
    sum = wasm_f32x4_add(sum, terms(&k, &c, p, act, yd, b + offsetof(block_q8_K, bsums)));
  }
  /* acc still holds the state the call started from */
  if (!bq_kq_finite(sum))
    sum = bq_kq_redo(acc, p - nb * xs, b - nb * sizeof(block_q8_K), nb * QK_K, ref);
  wasm_v128_store(acc, sum);
}

/* A matvec row as the dot kernel computes it, for a row whose terms are not all finite (the dot
 * redoes it by the reference, bq_kq_redo), so the row still equals the dot. */
__attribute__((noinline, cold)) static float bq_kq_row_dot(const uint8_t *w, const uint8_t *x,
                                                           size_t cols,
                                                           int (*dot)(const void *, const void *,
                                                                      size_t, float *)) {
  float acc[BQ_ACC_LANES] = {0};
  dot(w, x, cols, acc);
  return bq_acc_sum__simd128(acc);
}

/* y[r] = the dot of row r, from the same terms on activations prepared once; plain dots when the
 * row is too long to prepare. */
BQ_KQ_INLINE int bq_kq_matvec(const uint8_t *w, size_t rows, size_t cols, const uint8_t *x,
                              float *y, size_t xs, bq_kq_terms_fn terms,
                              int (*dot)(const void *, const void *, size_t, float *)) {
  if (cols % QK_K) return BQ_EINVAL;
  const size_t nb = cols / QK_K;
  bq_kq_prep pr;
  if (!bq_kq_prepare(x, nb, &pr)) {
    for (size_t r = 0; r < rows; r++) {
      float acc[BQ_ACC_LANES] = {0};
      dot(w + r * nb * xs, x, cols, acc);
      y[r] = bq_acc_sum__simd128(acc);
    }
    return BQ_OK;
  }
  const bq_k k = bq_consts();
  const bq_kq c = bq_kq_consts();
  for (size_t r = 0; r < rows; r++) {
    v128_t sum = wasm_f32x4_splat(0.0f);
    const uint8_t *b = x + offsetof(block_q8_K, bsums);
    for (size_t i = 0; i < nb; i++, w += xs, b += sizeof(block_q8_K)) {
      const bq_kq_act act = {NULL, pr.q + i * QK_K};
      sum = wasm_f32x4_add(sum, terms(&k, &c, w, act, pr.d[i], b));
    }
    y[r] = bq_kq_finite(sum) ? bq_kq_row_sum(sum) : bq_kq_row_dot(w - nb * xs, x, cols, dot);
  }
  return BQ_OK;
}

#endif
