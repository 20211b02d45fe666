/* One K-quant super-block in SIMD128, with importance weights (qw, the 256 weights of its columns:
 * ggml's quantize_row_<t>_impl) or without (qw NULL: quantize_row_<t>_ref): the sub-block fits
 * four at a time (search.h), the scale steps of the reference (scalar, src/ref/, src/imat/), the
 * re-quantization against the stored scales in vectors. Used by the quantize kernels of
 * src/simd128/q<k>_K.c (qw NULL, so the weighted paths compile out) and the quantize_rows kernels
 * of src/imat/simd128/.
 *
 * The values must be finite (callers send a super-block holding a NaN or an Inf to the reference).
 * Each function returns 0 when a half it would store is a NaN, whose sign only the reference
 * gives as x86-64 does: the caller then redoes the block there. */
#ifndef BQ_IMAT_SIMD128_KQUANTS_H
#define BQ_IMAT_SIMD128_KQUANTS_H

#include "../q45_K.h"
#include "search.h"

static inline int bq_half_is_nan(uint16_t h) { return (h & 0x7FFF) > 0x7C00; }

/* ggml's sum_x2 of a super-block, in order (plain: the values are finite). */
BQ_FIT_INLINE float bq_kq_sum_x2(const float *x) {
  float s = 0;
  for (int i = 0; i < QK_K; i++) s += x[i] * x[i];
  return s;
}

/* Per lane, the sum of v[0..n-1] in order from 0 (a sub-block's total weight). */
BQ_FIT_INLINE v128_t bq_fit4_sum(const v128_t *v, int n) {
  v128_t s = wasm_f32x4_splat(0);
  for (int i = 0; i < n; i++) s = wasm_f32x4_add(s, v[i]);
  return s;
}

/* The code packings of the K-quants on 16 codes at a time (src/ref/ does them byte by byte, which
 * costs V8 more than the fits' last steps). Codes are bytes; a shift of i16 lanes moves each
 * byte's bits alone as long as they stay inside it, and a mask after a right shift drops the
 * bits that came from the byte above. */
#define BQ_B8(c) wasm_i8x16_splat((int8_t)(c))
#define BQ_SHL(v, k) wasm_i16x8_shl((v), (k))
#define BQ_SHR(v, k, mask) wasm_v128_and(wasm_u16x8_shr((v), (k)), BQ_B8(mask))

/* Q2_K, Q3_K: the 2-bit codes (c & 3) of L[256] into qs[64]: qs[32h + l] holds elements
 * 128h + 32k + l in bits 2k. */
BQ_FIT_INLINE void bq_kq_pack_2bit_simd(const uint8_t *L, uint8_t *qs) {
  for (int h = 0; h < 2; h++)
    for (int l = 0; l < 32; l += 16) {
      const uint8_t *p = L + 128 * h + l;
      v128_t q = wasm_v128_and(wasm_v128_load(p), BQ_B8(3));
      for (int k = 1; k < 4; k++)
        q = wasm_v128_or(q, BQ_SHL(wasm_v128_and(wasm_v128_load(p + 32 * k), BQ_B8(3)), 2 * k));
      wasm_v128_store(qs + 32 * h + l, q);
    }
}

/* Bit `bit` of each code L[32k + i] (k = 0..7) as bit k of m[i], i = 0..31: Q3_K's hmask
 * (bit 2), Q5_K's qh (bit 4). */
BQ_FIT_INLINE void bq_kq_bit_planes_simd(const uint8_t *L, int bit, uint8_t *m) {
  for (int i = 0; i < 32; i += 16) {
    v128_t v = wasm_i32x4_splat(0);
    for (int k = 0; k < 8; k++)
      v = wasm_v128_or(v, BQ_SHL(BQ_SHR(wasm_v128_load(L + 32 * k + i), bit, 1), k));
    wasm_v128_store(m + i, v);
  }
}

/* Q4_K, Q5_K: the low nibbles of L[256] into qs[128]: qs[32c + l] = L[64c + l] | L[64c + 32 + l]
 * << 4. */
BQ_FIT_INLINE void bq_q45_K_pack_4bit_simd(const uint8_t *L, uint8_t *qs) {
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l += 16) {
      const v128_t a = wasm_v128_and(wasm_v128_load(L + 64 * c + l), BQ_B8(0xF));
      const v128_t b = wasm_v128_and(wasm_v128_load(L + 64 * c + 32 + l), BQ_B8(0xF));
      wasm_v128_store(qs + 32 * c + l, wasm_v128_or(a, BQ_SHL(b, 4)));
    }
}

/* Q6_K: codes L[256] (0..63) into ql (low nibbles) and qh (high two bits), as bq_q6_K_pack_codes.
 */
BQ_FIT_INLINE void bq_q6_K_pack_simd(const uint8_t *L, block_q6_K *b) {
  for (int h = 0; h < 2; h++)
    for (int l = 0; l < 32; l += 16) {
      const uint8_t *p = L + 128 * h + l;
      const v128_t c0 = wasm_v128_load(p), c1 = wasm_v128_load(p + 32);
      const v128_t c2 = wasm_v128_load(p + 64), c3 = wasm_v128_load(p + 96);
      const v128_t n = BQ_B8(0xF);
      wasm_v128_store(b->ql + 64 * h + l,
                      wasm_v128_or(wasm_v128_and(c0, n), BQ_SHL(wasm_v128_and(c2, n), 4)));
      wasm_v128_store(b->ql + 64 * h + 32 + l,
                      wasm_v128_or(wasm_v128_and(c1, n), BQ_SHL(wasm_v128_and(c3, n), 4)));
      const v128_t hi =
          wasm_v128_or(wasm_v128_or(BQ_SHR(c0, 4, 3), BQ_SHL(BQ_SHR(c1, 4, 3), 2)),
                       wasm_v128_or(BQ_SHL(BQ_SHR(c2, 4, 3), 4), BQ_SHL(BQ_SHR(c3, 4, 3), 6)));
      wasm_v128_store(b->qh + 32 * h + l, hi);
    }
}

/* Q4_K (nmax 15) and Q5_K (nmax 31): codes to L, scales, d, dmin. Without weights the fits are
 * make_qkx2_quants with rmin, nstep (rdelta 0.1) and weights av_x + |x|, av_x the sub-block's
 * rms; with them make_qkx3_quants, weights qw * sqrt(sigma2 + x^2), sigma2 twice the super-block's
 * mean x^2, and clamp63 says whether the 6-bit codes are clamped (Q5_K) or not (Q4_K). */
BQ_FIT_INLINE int bq_q45_K_simd(const float *x, const float *qw, int nmax, float rmin, int nstep,
                                int clamp63, uint8_t *L, uint8_t *scales, uint16_t *d,
                                uint16_t *dmin) {
  float sc[8], mins[8], sw[8];
  const float sigma2 = qw ? 2 * bq_kq_sum_x2(x) / QK_K : 0;
  for (int g = 0; g < 2; g++) {
    v128_t xt[32], wt[32], codes[32], scale, the_min;
    bq_fit4_load(x + 128 * g, 32, 32, xt);
    if (qw) {
      v128_t qt[32];
      bq_fit4_load(qw + 128 * g, 32, 32, qt);
      bq_fit4_weights(xt, qt, 32, sigma2, wt);
      wasm_v128_store(sw + 4 * g, bq_fit4_sum(wt, 32));
      bq_affine_fit4(xt, wt, 32, nmax, BQ_IMAT_RMIN, BQ_IMAT_RDELTA, BQ_IMAT_NSTEP, 0, &scale,
                     &the_min, codes);
    } else {
      v128_t s = wasm_f32x4_splat(0);
      for (int i = 0; i < 32; i++) s = wasm_f32x4_add(s, wasm_f32x4_mul(xt[i], xt[i]));
      const v128_t av_x = wasm_f32x4_sqrt(wasm_f32x4_div(s, wasm_f32x4_splat(32)));
      for (int i = 0; i < 32; i++) wt[i] = wasm_f32x4_add(av_x, wasm_f32x4_abs(xt[i]));
      bq_affine_fit4(xt, wt, 32, nmax, rmin, 0.1f, nstep, 0, &scale, &the_min, codes);
    }
    wasm_v128_store(sc + 4 * g, scale);
    wasm_v128_store(mins + 4 * g, the_min);
    bq_fit4_store_codes(codes, 32, L + 128 * g, 32);
  }
  if (qw)
    bq_q45_K_imat_scales(sc, mins, sw, clamp63, scales, d, dmin);
  else
    bq_q45_K_scales(sc, mins, scales, d, dmin);
  if (bq_half_is_nan(*d) || bq_half_is_nan(*dmin)) return 0;
  const float df = bq_h2f(*d), dminf = bq_h2f(*dmin);
  for (int j = 0; j < 8; j++) {
    uint8_t s, m;
    bq_scale_min_k4(j, scales, &s, &m);
    const float dl = df * (float)s;
    if (dl == 0) continue; /* keeps its fit's codes */
    bq_requant_affine(x + 32 * j, 32, dl, dminf * (float)m, nmax, L + 32 * j);
  }
  return 1;
}

/* Q2_K: 16 affine fits of 16 (nmax 3): without weights make_qkx2_quants (weights |x|, absolute
 * error, rmin -0.5, 16 trials), with them make_qkx3_quants (sigma2 the super-block's mean x^2). */
BQ_FIT_INLINE int bq_q2_K_simd(const float *x, const float *qw, block_q2_K *b) {
  uint8_t L[QK_K];
  float sc[16], mins[16], sw[16];
  const float sigma2 = qw ? bq_kq_sum_x2(x) / QK_K : 0;
  for (int g = 0; g < 4; g++) {
    v128_t xt[16], wt[16], codes[16], scale, the_min;
    bq_fit4_load(x + 64 * g, 16, 16, xt);
    if (qw) {
      v128_t qt[16];
      bq_fit4_load(qw + 64 * g, 16, 16, qt);
      bq_fit4_weights(xt, qt, 16, sigma2, wt);
      wasm_v128_store(sw + 4 * g, bq_fit4_sum(wt, 16));
      bq_affine_fit4(xt, wt, 16, 3, BQ_IMAT_RMIN, BQ_IMAT_RDELTA, BQ_IMAT_NSTEP, 0, &scale,
                     &the_min, codes);
    } else {
      for (int i = 0; i < 16; i++) wt[i] = wasm_f32x4_abs(xt[i]);
      bq_affine_fit4(xt, wt, 16, 3, -0.5f, 0.1f, 15, 1, &scale, &the_min, codes);
    }
    wasm_v128_store(sc + 4 * g, scale);
    wasm_v128_store(mins + 4 * g, the_min);
    bq_fit4_store_codes(codes, 16, L + 64 * g, 16);
  }
  if (qw)
    bq_q2_K_imat_scales(sc, mins, sw, b);
  else
    bq_q2_K_scales(sc, mins, b);
  if (bq_half_is_nan(b->d) || bq_half_is_nan(b->dmin)) return 0;
  const float df = bq_h2f(b->d), dminf = bq_h2f(b->dmin);
  for (int j = 0; j < 16; j++) {
    const float dl = df * (float)(b->scales[j] & 0xF);
    if (dl == 0) continue;
    bq_requant_affine(x + 16 * j, 16, dl, dminf * (float)(b->scales[j] >> 4), 3, L + 16 * j);
  }
  bq_kq_pack_2bit_simd(L, b->qs);
  return 1;
}

/* Q3_K: 16 fits of 16: without weights make_q3_quants, with them make_qx_quants (nmax 4, weights
 * qw * sqrt(sigma2 + x^2), sigma2 twice the super-block's mean x^2). */
BQ_FIT_INLINE int bq_q3_K_simd(const float *x, const float *qw, block_q3_K *b) {
  uint8_t L[QK_K];
  float sc[16], sw[16];
  v128_t xt[4 * 16], codes[4 * 16], scale[4];
  for (int g = 0; g < 4; g++) bq_fit4_load(x + 64 * g, 16, 16, xt + 16 * g);
  if (qw) {
    const float sigma2 = 2 * bq_kq_sum_x2(x) / QK_K;
    for (int g = 0; g < 4; g++) {
      v128_t qt[16], wt[16], wx[16];
      bq_fit4_load(qw + 64 * g, 16, 16, qt);
      bq_fit4_weights(xt + 16 * g, qt, 16, sigma2, wt);
      wasm_v128_store(sw + 4 * g, bq_fit4_sum(wt, 16));
      for (int i = 0; i < 16; i++) wx[i] = wasm_f32x4_mul(wt[i], xt[16 * g + i]);
      bq_symmetric_fit4(xt + 16 * g, wt, wx, 16, 4, scale + g, codes + 16 * g);
    }
  } else {
    bq_q3_fit4(xt, 4, 16, 4, scale, codes);
  }
  for (int g = 0; g < 4; g++) {
    wasm_v128_store(sc + 4 * g, scale[g]);
    bq_fit4_store_codes(codes + 16 * g, 16, L + 64 * g, 16);
  }
  if (qw)
    bq_q3_K_imat_scales(sc, sw, b);
  else
    bq_q3_K_scales(sc, b);
  if (bq_half_is_nan(b->d)) return 0;
  const float df = bq_h2f(b->d);
  for (int j = 0; j < 16; j++) {
    const float dl = df * (float)(bq_q3_K_scale(b->scales, j) - 32);
    if (dl == 0) continue;
    bq_requant_symmetric(x + 16 * j, 16, dl, -4, 3, 4, L + 16 * j);
  }
  bq_kq_bit_planes_simd(L, 2, b->hmask);
  bq_kq_pack_2bit_simd(L, b->qs);
  return 1;
}

/* Q6_K: 16 make_qx_quants fits of 16 (nmax 32), weighted by x*x, or by qw itself. */
BQ_FIT_INLINE int bq_q6_K_simd(const float *x, const float *qw, block_q6_K *b) {
  uint8_t L[QK_K];
  float sc[16];
  for (int g = 0; g < 4; g++) {
    v128_t xt[16], wt[16], wx[16], codes[16], scale;
    bq_fit4_load(x + 64 * g, 16, 16, xt);
    if (qw)
      bq_fit4_load(qw + 64 * g, 16, 16, wt);
    else
      for (int i = 0; i < 16; i++) wt[i] = wasm_f32x4_mul(xt[i], xt[i]);
    for (int i = 0; i < 16; i++) wx[i] = wasm_f32x4_mul(wt[i], xt[i]);
    bq_symmetric_fit4(xt, wt, wx, 16, 32, &scale, codes);
    wasm_v128_store(sc + 4 * g, scale);
    bq_fit4_store_codes(codes, 16, L + 64 * g, 16);
  }
  if (!bq_q6_K_scales(sc, b)) return 1; /* all zero */
  if (bq_half_is_nan(b->d)) return 0;
  const float df = bq_h2f(b->d);
  for (int j = 0; j < 16; j++) {
    const float dl = df * (float)b->scales[j];
    if (dl == 0) continue;
    bq_requant_symmetric(x + 16 * j, 16, dl, -32, 31, 32, L + 16 * j);
  }
  bq_q6_K_pack_simd(L, b);
  return 1;
}

/* Q4_K and Q5_K as the functions above. */
BQ_FIT_INLINE int bq_q4_K_simd(const float *x, const float *qw, block_q4_K *b) {
  uint8_t L[QK_K];
  if (!bq_q45_K_simd(x, qw, 15, -1.0f, 20, 0, L, b->scales, &b->d, &b->dmin)) return 0;
  bq_q45_K_pack_4bit_simd(L, b->qs);
  return 1;
}
BQ_FIT_INLINE int bq_q5_K_simd(const float *x, const float *qw, block_q5_K *b) {
  uint8_t L[QK_K];
  if (!bq_q45_K_simd(x, qw, 31, -0.5f, 15, 1, L, b->scales, &b->d, &b->dmin)) return 0;
  bq_kq_bit_planes_simd(L, 4, b->qh);
  bq_q45_K_pack_4bit_simd(L, b->qs);
  return 1;
}

/* The super-block loops: quantize (qw NULL) over n values, and quantize_rows with weights, each
 * super-block through `simd` unless its values (or the weights) hold a NaN or an Inf, or `simd`
 * declines it; then through `ref`, the reference step of the same super-block. */
#define BQ_KQ_SIMD_QUANTIZE(t, simd)                                                               \
  BQ_QUANTIZE_PROTO(t, __simd128) {                                                                \
    if (n % QK_K) return BQ_EINVAL;                                                                \
    for (size_t i = 0; i < n / QK_K; i++) {                                                        \
      const float *xb = x + i * QK_K;                                                              \
      block_##t b;                                                                                 \
      if (bq_any_nonfinite(xb, QK_K) || !simd(xb, NULL, &b)) bq_##t##_quantize__ref(xb, &b, QK_K); \
      memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);                                           \
    }                                                                                              \
    return BQ_OK;                                                                                  \
  }
#define BQ_KQ_SIMD_QUANTIZE_ROWS(t, simd)                           \
  BQ_QUANTIZE_ROWS_PROTO(t, __simd128) {                            \
    if (cols % QK_K) return BQ_EINVAL;                              \
    if (!qw) return bq_##t##_quantize(x, y, rows * cols);           \
    const int bad_w = bq_any_nonfinite(qw, cols);                   \
    const size_t nb = cols / QK_K;                                  \
    for (size_t i = 0; i < rows * nb; i++) {                        \
      const float *xb = x + i * QK_K, *wb = qw + i % nb * QK_K;     \
      block_##t b;                                                  \
      if (bad_w || bq_any_nonfinite(xb, QK_K) || !simd(xb, wb, &b)) \
        bq_##t##_imat_block__ref(xb, wb, &b);                       \
      memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);            \
    }                                                               \
    return BQ_OK;                                                   \
  }

#endif
