/* The dots of the IQ2 and IQ3 grid formats (iq2_xxs.c, iq2_xs.c, iq2_s.c, iq3_xxs.c, iq3_s.c)
 * with Q8_K and f32, and their matvecs (IQ1_S and IQ1_M, whose dots add a delta term, build theirs
 * from the same pieces in their files), from one function per format that gives a sub-block's 32
 * signed values (grid magnitudes times signs, as i8, exactly as the decoders form them) and the
 * integer weights of its halves (2s + 1; IQ2_XS and IQ2_S scale the halves apart).
 *
 * Q8_K: ggml's exact integer sum per super-block, sum over half sub-blocks of weight * sum(value *
 * q8), with the activations widened to i16 in kq236.h's pair order (even bytes, then odd ones,
 * of each 16), and then its float term (D * yd) * (float)bsum, added to acc[0] in order: the
 * reference's result, to the bit. The pair's result is the format's final scale times acc[0]
 * (0.125f, 0.25f) or the lane sum (IQ3_S), as ggml's. A matvec row is the same terms from a zero
 * state, read by the same function.
 *
 * f32: the decoded values (iq.h: value * 2^24 times db * 2^-24, where db = d * weight times the
 * format's scale is exact) times x, summed in four lanes per super-block as the other fused dots.
 */
#ifndef BQ_SIMD_IQDOT_H
#define BQ_SIMD_IQDOT_H

#include "iq.h"
#include "kq236.h" /* kq_act, kq_prepare, kq_dot, kq_hsum, KQ_PREP_MAX */

/* Sub-block ib of the block at b: values v[0] (elements 0..15) and v[1] (16..31), weights ls[0]
 * and ls[1] of the two halves. */
typedef void (*iqg_sub_fn)(const uint8_t *b, int ib, v128_t v[2], int32_t ls[2]);

/* The 16 values v (i8) times the activations at a (pair order), as i32x4 partial sums. */
static inline v128_t iqg_dot16(v128_t v, const int16_t *a) {
  const v128_t e = wasm_i16x8_shr(wasm_i16x8_shl(v, 8), 8), o = wasm_i16x8_shr(v, 8);
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(e, wasm_v128_load(a)),
                        wasm_i32x4_dot_i16x8(o, wasm_v128_load(a + 8)));
}

/* The reference's term (D * yd) * (float)bsum, in every lane, of the block at b (d at offset 0)
 * against the Q8_K block at yb, its codes prepared in a. |bsum| < 2^26: 256 values of at most 62
 * times 128, weights at most 31. */
KQ_INLINE v128_t iqg_term(const uint8_t *b, const uint8_t *yb, const kq_act *a, iqg_sub_fn sub) {
  v128_t acc = wasm_i32x4_splat(0);
  for (int ib = 0; ib < 8; ib++) {
    v128_t v[2];
    int32_t ls[2];
    sub(b, ib, v, ls);
    acc = wasm_i32x4_add(acc,
                         wasm_i32x4_mul(iqg_dot16(v[0], a->q + 32 * ib), wasm_i32x4_splat(ls[0])));
    acc = wasm_i32x4_add(
        acc, wasm_i32x4_mul(iqg_dot16(v[1], a->q + 32 * ib + 16), wasm_i32x4_splat(ls[1])));
  }
  float yd;
  memcpy(&yd, yb + offsetof(block_q8_K, d), 4);
  return wasm_f32x4_mul(wasm_f32x4_splat(bq_h2f_fast(bq_rd16(b)) * yd),
                        wasm_f32x4_convert_i32x4(kq_hsum(acc)));
}

/* y[r] = sum(state of the dot of row r): the terms on activations prepared once, in lane 0 from
 * zero, then fs * lane 0 (sum's fs * acc[0]; stored from the vector, as a lane read in the loop
 * would be a lane move), or for fs = 1 the lane sum (kq_row_sum); the dot kernel per row when the
 * rows are too long to prepare. */
KQ_INLINE int iqg_matvec(const uint8_t *w, size_t rows, size_t cols, const uint8_t *x, float *y,
                         size_t xs, kq_term_fn term,
                         int (*dot)(const void *, const void *, size_t, float *),
                         float (*sum)(const float *), float fs) {
  if (cols % QK_K) return BQ_EINVAL;
  const size_t nb = cols / QK_K, ys = sizeof(block_q8_K);
  if (nb > KQ_PREP_MAX) {
    for (size_t r = 0; r < rows; r++) {
      float acc[BQ_ACC_LANES] = {0};
      dot(w + r * nb * xs, x, cols, acc);
      y[r] = sum(acc);
    }
    return BQ_OK;
  }
  const kq_k k = kq_consts();
  for (size_t i = 0; i < nb; i++) kq_prepare(&k, x + i * ys, &bq_kq236_prep[i]);
  for (size_t r = 0; r < rows; r++, w += nb * xs) {
    v128_t s = wasm_f32x4_splat(0);
    for (size_t i = 0; i < nb; i++)
      s = wasm_f32x4_add(s, term(&k, w + i * xs, x + i * ys, &bq_kq236_prep[i]));
    if (fs == 1.0f)
      y[r] = kq_row_sum(s);
    else
      wasm_v128_store32_lane(y + r, wasm_f32x4_mul(wasm_f32x4_splat(fs), s), 0);
  }
  return BQ_OK;
}

/* acc += the fused f32 dot of nb blocks (xs bytes, d at offset 0) at b with the floats at v: per
 * half sub-block db * 2^-24 = (D * weight) * fs24, fs24 the format's scale times 2^-24 (all exact,
 * as the decoders' db * 2^-24). */
KQ_INLINE void iqg_dot_f32(const uint8_t *b, const float *v, size_t nb, size_t xs, float fs24,
                           float *acc, iqg_sub_fn sub) {
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < nb; i++, b += xs, v += QK_K) {
    const float d = bq_h2f_fast(bq_rd16(b));
    v128_t s[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0),
                   wasm_f32x4_splat(0)};
    for (int ib = 0; ib < 8; ib++) {
      v128_t q[2], w[4];
      int32_t ls[2];
      sub(b, ib, q, ls);
      for (int h = 0; h < 2; h++) {
        bq_top_bytes_mul(q[h], wasm_f32x4_splat(d * (float)ls[h] * fs24), w);
        for (int t = 0; t < 4; t++)
          s[t] = wasm_f32x4_add(s[t],
                                wasm_f32x4_mul(w[t], wasm_v128_load(v + 32 * ib + 16 * h + 4 * t)));
      }
    }
    sum = wasm_f32x4_add(sum, kq_sum4(s[0], s[1], s[2], s[3]));
  }
  wasm_v128_store(acc, sum);
}

/* An IQ1 sub-block ib of the block at b: grid values g[0] (elements 0..15), g[1] (16..31) in
 * {-1, 0, 1}, delta bytes e[0], e[1] (+-1: the sign of each group's delta) and the weights
 * ls[0], ls[1] (2s + 1) of its halves. */
typedef void (*iq1_sub_fn)(const uint8_t *b, int ib, v128_t g[2], v128_t e[2], int32_t ls[2]);

/* acc += the fused f32 dot of nb IQ1 blocks (xs bytes; d(b) their scale) at b with the floats at
 * v: the decoders' values 8 * (grid + delta) * 2^24 times (D * weight) * 2^-27 (iq.h). */
KQ_INLINE void iq1_dot_f32(const uint8_t *b, const float *v, size_t nb, size_t xs, float *acc,
                           float (*d)(const uint8_t *), iq1_sub_fn sub) {
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < nb; i++, b += xs, v += QK_K) {
    const float db = d(b);
    v128_t s[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0),
                   wasm_f32x4_splat(0)};
    for (int ib = 0; ib < 8; ib++) {
      v128_t g[2], e[2], w[4];
      int32_t ls[2];
      sub(b, ib, g, e, ls);
      for (int h = 0; h < 2; h++) {
        bq_top_bytes_mul(bq_iq1_values(g[h], e[h]), wasm_f32x4_splat(db * (float)ls[h] * 0x1p-27f),
                         w);
        for (int t = 0; t < 4; t++)
          s[t] = wasm_f32x4_add(s[t],
                                wasm_f32x4_mul(w[t], wasm_v128_load(v + 32 * ib + 16 * h + 4 * t)));
      }
    }
    sum = wasm_f32x4_add(sum, kq_sum4(s[0], s[1], s[2], s[3]));
  }
  wasm_v128_store(acc, sum);
}

/* Dequantize of nb blocks (xs bytes, d at offset 0) at p: per half sub-block the values times
 * (D * weight) * fs24 (the reference's db times 2^-24, exactly; iq.h), through the scale slots.
 * Not unrolled: each pass stores its 128 bytes in order (see kq45.h). */
KQ_INLINE void iqg_dequantize(const uint8_t *p, float *y, size_t nb, size_t xs, float fs24,
                              iqg_sub_fn sub) {
  for (size_t i = 0; i < nb; i++, p += xs) {
    const float d = bq_h2f_fast(bq_rd16(p));
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, y += 32) {
      v128_t v[2], d0, d1, w[8];
      int32_t ls[2];
      sub(p, ib, v, ls);
      bq_iq_slot_splat2(d * (float)ls[0] * fs24, d * (float)ls[1] * fs24, &d0, &d1);
      bq_top_bytes_mul(v[0], d0, w);
      bq_top_bytes_mul(v[1], d1, w + 4);
      for (int j = 0; j < 8; j++) wasm_v128_store(y + 4 * j, w[j]);
    }
  }
}

/* The same for IQ1 blocks (d(p) their scale): the values 8 * (grid + delta) times
 * (D * weight) * 2^-27. */
KQ_INLINE void iq1_dequantize(const uint8_t *p, float *y, size_t nb, size_t xs,
                              float (*d)(const uint8_t *), iq1_sub_fn sub) {
  for (size_t i = 0; i < nb; i++, p += xs) {
    const float db = d(p);
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, y += 32) {
      v128_t g[2], e[2], d0, d1;
      int32_t ls[2];
      sub(p, ib, g, e, ls);
      bq_iq_slot_splat2(db * (float)ls[0] * 0x1p-27f, db * (float)ls[1] * 0x1p-27f, &d0, &d1);
      bq_iq1_store(g[0], g[1], e[0], e[1], d0, d1, y);
    }
  }
}

/* The Q8_K and f32 dots and the Q8_K matvec of grid format t (block_<t>, its file's sub and the
 * final scale fs of its Q8_K dot: 0.125f, 0.25f or 1), and, unless fs is 1, the Q8_K pair's own
 * result fs * acc[0] (dispatch.c marks those pairs). */
#define BQ_IQG_KERNELS(t, fs)                                                                      \
  static inline v128_t term(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) { \
    (void)k;                                                                                       \
    return iqg_term(b, yb, a, sub);                                                                \
  }                                                                                                \
  BQ_DOT_PROTO(t, q8_K, __simd128) {                                                               \
    if (n % QK_K) return BQ_EINVAL;                                                                \
    kq_dot(x, y, n / QK_K, sizeof(block_##t), acc, term);                                          \
    return BQ_OK;                                                                                  \
  }                                                                                                \
  float bq_##t##_dot_q8_K_sum__simd128(const float *acc) {                                         \
    return (fs) == 1.0f ? bq_acc_sum__simd128(acc) : (fs)*acc[0];                                  \
  }                                                                                                \
  BQ_MATVEC_PROTO(t, q8_K, __simd128) {                                                            \
    return iqg_matvec(w, rows, cols, x, y, sizeof(block_##t), term, bq_##t##_dot_q8_K__simd128,    \
                      bq_##t##_dot_q8_K_sum__simd128, (fs));                                       \
  }                                                                                                \
  BQ_DOT_PROTO(t, f32, __simd128) {                                                                \
    if (n % QK_K) return BQ_EINVAL;                                                                \
    iqg_dot_f32(x, y, n / QK_K, sizeof(block_##t), (fs)*0x1p-24f, acc, sub);                       \
    return BQ_OK;                                                                                  \
  }

#endif
