/* The K-quant fits in SIMD128, four fits at a time: each f32x4 lane runs one fit of ggml's
 * (make_qkx2/3_quants, make_qx_quants, make_q3_quants) on its own sub-block, through every trial
 * in ggml's order and every sum in element order, so each lane computes exactly what the scalar
 * fit computes (src/ref/kquants.c); a trial a lane keeps is a per-lane select. Vectorising across
 * fits rather than across the trial scales of one fit keeps every lane busy: the affine fit's
 * trials depend on each other (a kept trial moves the min the next ones use), so trials in lanes
 * would have to be redone after each keep.
 *
 * The inputs are four sub-blocks transposed (bq_fit4_load: vector i holds element i of each), the
 * codes come out the same way (bq_fit4_store_codes puts them back as bytes). Plain arithmetic:
 * the callers send inputs holding a NaN or an Inf to the reference (imat.h, kquants.h), where
 * fp.h gives a NaN x86-64's bits; with finite inputs a NaN can still arise (Inf - Inf after an
 * overflow), but only with the payload every engine gives (the canonical one, whose code is 0)
 * and a sign that matters only in a stored half, which the callers check. */
#ifndef BQ_IMAT_SIMD128_SEARCH_H
#define BQ_IMAT_SIMD128_SEARCH_H

#include <wasm_simd128.h>

#include "../imat.h"

#define BQ_FIT_INLINE static inline __attribute__((always_inline))

/* Element i of the four rows x + j * stride (j = 0..3), i < n (a multiple of 4), into xt[i]. */
BQ_FIT_INLINE void bq_fit4_load(const float *x, size_t stride, int n, v128_t *xt) {
  for (int i = 0; i < n; i += 4) {
    const v128_t a = wasm_v128_load(x + i), b = wasm_v128_load(x + stride + i);
    const v128_t c = wasm_v128_load(x + 2 * stride + i), d = wasm_v128_load(x + 3 * stride + i);
    const v128_t ab0 = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5),
                 ab1 = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
    const v128_t cd0 = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5),
                 cd1 = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
    xt[i] = wasm_i64x2_shuffle(ab0, cd0, 0, 2);
    xt[i + 1] = wasm_i64x2_shuffle(ab0, cd0, 1, 3);
    xt[i + 2] = wasm_i64x2_shuffle(ab1, cd1, 0, 2);
    xt[i + 3] = wasm_i64x2_shuffle(ab1, cd1, 1, 3);
  }
}

/* The codes ct[i] (i32 lanes 0..255, lane j of sub-block j) as bytes L[j * stride + i]. */
BQ_FIT_INLINE void bq_fit4_store_codes(const v128_t *ct, int n, uint8_t *L, size_t stride) {
  for (int i = 0; i < n; i += 4) {
    const v128_t b = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(ct[i], ct[i + 1]),
                                             wasm_i16x8_narrow_i32x4(ct[i + 2], ct[i + 3]));
    /* byte 4k + j is element i + k of sub-block j: gather each sub-block's four */
    const v128_t t = wasm_i8x16_shuffle(b, b, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    wasm_v128_store32_lane(L + i, t, 0);
    wasm_v128_store32_lane(L + stride + i, t, 1);
    wasm_v128_store32_lane(L + 2 * stride + i, t, 2);
    wasm_v128_store32_lane(L + 3 * stride + i, t, 3);
  }
}

/* 1 if one of the n floats (n a multiple of 4) is a NaN or an Inf. */
static inline int bq_any_nonfinite(const float *x, size_t n) {
  const v128_t inf = wasm_i32x4_splat(0x7F800000);
  v128_t bad = wasm_i32x4_splat(0);
  for (size_t i = 0; i < n; i += 4)
    bad = wasm_v128_or(bad, wasm_i32x4_eq(wasm_v128_and(wasm_v128_load(x + i), inf), inf));
  return wasm_v128_any_true(bad);
}

/* ggml's nearest_int of four floats: the low 23 bits of v + 1.5 * 2^23, minus 2^22 (the integer
 * nearest v, ties to even, for |v| < 2^22, and what x86-64 gives beyond). */
BQ_FIT_INLINE v128_t bq_nearest_i32x4(v128_t v) {
  const v128_t s = wasm_f32x4_add(v, wasm_f32x4_splat(12582912.0f));
  return wasm_i32x4_sub(wasm_v128_and(s, wasm_i32x4_splat(0x7FFFFF)), wasm_i32x4_splat(0x400000));
}

/* The same rounded to an integral float, for |v| < 2^22 (the symmetric fits' |v| <= nmax + 1). */
BQ_FIT_INLINE v128_t bq_round_small(v128_t v) {
  const v128_t m = wasm_f32x4_splat(12582912.0f);
  return wasm_f32x4_sub(wasm_f32x4_add(v, m), m);
}

/* Four affine fits x ~ scale * L + min, L in 0..nmax, weighted by w (n elements each):
 * make_qkx2_quants / make_qkx3_quants with weights, rmin, rdelta and nstep (nstep >= 1), use_mad
 * 0 (squared error) or 1 (absolute). Writes each fit's scale, -min (the_min) and codes. */
BQ_FIT_INLINE void bq_affine_fit4(const v128_t *x, const v128_t *w, int n, int nmax, float rmin,
                                  float rdelta, int nstep, int use_mad, v128_t *scale_out,
                                  v128_t *the_min, v128_t *codes) {
  const v128_t zero = wasm_f32x4_splat(0), fnmax = wasm_f32x4_splat((float)nmax);
  const v128_t izero = wasm_i32x4_splat(0), inmax = wasm_i32x4_splat(nmax);
  v128_t min = x[0], max = x[0], sum_w = w[0], sum_x = wasm_f32x4_mul(w[0], x[0]);
  for (int i = 1; i < n; i++) {
    min = wasm_f32x4_pmin(min, x[i]); /* x < min ? x : min, as ggml's scan */
    max = wasm_f32x4_pmax(max, x[i]);
    sum_w = wasm_f32x4_add(sum_w, w[i]);
    sum_x = wasm_f32x4_add(sum_x, wasm_f32x4_mul(w[i], x[i]));
  }
  min = wasm_v128_bitselect(zero, min, wasm_f32x4_gt(min, zero));
  const v128_t flat = wasm_f32x4_le(max, min); /* these fits stop here: L = 0, scale 0 */
  v128_t iscale = wasm_f32x4_div(fnmax, wasm_f32x4_sub(max, min));
  v128_t scale = wasm_f32x4_div(wasm_f32x4_splat(1), iscale);
  v128_t best = zero;
  for (int i = 0; i < n; i++) {
    const v128_t l = wasm_i32x4_min(
        wasm_i32x4_max(bq_nearest_i32x4(wasm_f32x4_mul(iscale, wasm_f32x4_sub(x[i], min))), izero),
        inmax);
    const v128_t diff = wasm_f32x4_sub(
        wasm_f32x4_add(wasm_f32x4_mul(scale, wasm_f32x4_convert_i32x4(l)), min), x[i]);
    const v128_t e = use_mad ? wasm_f32x4_abs(diff) : wasm_f32x4_mul(diff, diff);
    best = wasm_f32x4_add(best, wasm_f32x4_mul(w[i], e));
  }
  /* The codes of the last kept trial are recomputed at the end from its iscale and the min it
   * used (the initial ones if none is kept). */
  v128_t code_iscale = iscale, code_min = min;
  v128_t fl[32];
  for (int is = 0; is <= nstep; is++) {
    const v128_t it = wasm_f32x4_div(wasm_f32x4_splat(rmin + rdelta * (float)is + (float)nmax),
                                     wasm_f32x4_sub(max, min));
    v128_t sum_l = zero, sum_l2 = zero, sum_xl = zero;
    for (int i = 0; i < n; i++) {
      const v128_t l = wasm_i32x4_min(
          wasm_i32x4_max(bq_nearest_i32x4(wasm_f32x4_mul(it, wasm_f32x4_sub(x[i], min))), izero),
          inmax);
      fl[i] = wasm_f32x4_convert_i32x4(l);
      const v128_t wl = wasm_f32x4_mul(w[i], fl[i]);
      sum_l = wasm_f32x4_add(sum_l, wl);
      sum_l2 = wasm_f32x4_add(sum_l2, wasm_f32x4_mul(wl, fl[i]));
      sum_xl = wasm_f32x4_add(sum_xl, wasm_f32x4_mul(wl, x[i]));
    }
    const v128_t D = wasm_f32x4_sub(wasm_f32x4_mul(sum_w, sum_l2), wasm_f32x4_mul(sum_l, sum_l));
    v128_t ts = wasm_f32x4_div(
        wasm_f32x4_sub(wasm_f32x4_mul(sum_w, sum_xl), wasm_f32x4_mul(sum_x, sum_l)), D);
    v128_t tm = wasm_f32x4_div(
        wasm_f32x4_sub(wasm_f32x4_mul(sum_l2, sum_x), wasm_f32x4_mul(sum_l, sum_xl)), D);
    const v128_t pos = wasm_f32x4_gt(tm, zero);
    tm = wasm_v128_bitselect(zero, tm, pos);
    ts = wasm_v128_bitselect(wasm_f32x4_div(sum_xl, sum_l2), ts, pos);
    v128_t mad = zero;
    for (int i = 0; i < n; i++) {
      const v128_t diff = wasm_f32x4_sub(wasm_f32x4_add(wasm_f32x4_mul(ts, fl[i]), tm), x[i]);
      const v128_t e = use_mad ? wasm_f32x4_abs(diff) : wasm_f32x4_mul(diff, diff);
      mad = wasm_f32x4_add(mad, wasm_f32x4_mul(w[i], e));
    }
    const v128_t keep =
        wasm_v128_andnot(wasm_v128_and(wasm_f32x4_gt(D, zero), wasm_f32x4_lt(mad, best)), flat);
    best = wasm_v128_bitselect(mad, best, keep);
    scale = wasm_v128_bitselect(ts, scale, keep);
    code_iscale = wasm_v128_bitselect(it, code_iscale, keep);
    code_min = wasm_v128_bitselect(min, code_min, keep);
    min = wasm_v128_bitselect(tm, min, keep);
  }
  for (int i = 0; i < n; i++) {
    const v128_t l = wasm_i32x4_min(
        wasm_i32x4_max(
            bq_nearest_i32x4(wasm_f32x4_mul(code_iscale, wasm_f32x4_sub(x[i], code_min))), izero),
        inmax);
    codes[i] = wasm_v128_andnot(l, flat);
  }
  *scale_out = wasm_v128_andnot(scale, flat);
  *the_min = wasm_f32x4_neg(min);
}

/* Four symmetric fits x ~ scale * (L - nmax), L in 0..2*nmax-1 (make_qx_quants, rmse_type 1) with
 * weights w and wx = w * x: the signed value of largest |x| sets the first scale, 18 trials
 * follow. A fit whose largest |x| is below 1e-15 gets L = 0 and scale 0. */
BQ_FIT_INLINE void bq_symmetric_fit4(const v128_t *x, const v128_t *w, const v128_t *wx, int n,
                                     int nmax, v128_t *scale_out, v128_t *codes) {
  const v128_t zero = wasm_f32x4_splat(0);
  const v128_t lo = wasm_f32x4_splat((float)-nmax), hi = wasm_f32x4_splat((float)(nmax - 1));
  v128_t amax = zero, max = zero;
  for (int i = 0; i < n; i++) {
    const v128_t ax = wasm_f32x4_abs(x[i]), up = wasm_f32x4_gt(ax, amax);
    amax = wasm_v128_bitselect(ax, amax, up);
    max = wasm_v128_bitselect(x[i], max, up);
  }
  const v128_t tiny = wasm_f32x4_lt(amax, wasm_f32x4_splat(1e-15f));
  v128_t iscale = wasm_f32x4_div(wasm_f32x4_splat((float)-nmax), max);
  v128_t sumlx = zero, suml2 = zero;
  for (int i = 0; i < n; i++) {
    const v128_t l =
        wasm_f32x4_pmax(wasm_f32x4_pmin(bq_round_small(wasm_f32x4_mul(iscale, x[i])), hi), lo);
    sumlx = wasm_f32x4_add(sumlx, wasm_f32x4_mul(wx[i], l));
    suml2 = wasm_f32x4_add(suml2, wasm_f32x4_mul(wasm_f32x4_mul(w[i], l), l));
  }
  v128_t scale =
      wasm_v128_andnot(wasm_f32x4_div(sumlx, suml2), wasm_f32x4_eq(suml2, zero)); /* suml2 ? : 0 */
  v128_t best = wasm_f32x4_mul(scale, sumlx);
  v128_t code_iscale = iscale;
  for (int is = -9; is <= 9; is++) {
    if (is == 0) continue;
    const v128_t it = wasm_f32x4_div(wasm_f32x4_splat(-((float)nmax + 0.1f * (float)is)), max);
    sumlx = suml2 = zero;
    for (int i = 0; i < n; i++) {
      const v128_t l =
          wasm_f32x4_pmax(wasm_f32x4_pmin(bq_round_small(wasm_f32x4_mul(it, x[i])), hi), lo);
      sumlx = wasm_f32x4_add(sumlx, wasm_f32x4_mul(wx[i], l));
      suml2 = wasm_f32x4_add(suml2, wasm_f32x4_mul(wasm_f32x4_mul(w[i], l), l));
    }
    const v128_t keep =
        wasm_v128_and(wasm_f32x4_gt(suml2, zero),
                      wasm_f32x4_gt(wasm_f32x4_mul(sumlx, sumlx), wasm_f32x4_mul(best, suml2)));
    const v128_t s = wasm_f32x4_div(sumlx, suml2);
    scale = wasm_v128_bitselect(s, scale, keep);
    best = wasm_v128_bitselect(wasm_f32x4_mul(s, sumlx), best, keep);
    code_iscale = wasm_v128_bitselect(it, code_iscale, keep);
  }
  const v128_t off = wasm_f32x4_splat((float)nmax);
  for (int i = 0; i < n; i++) {
    const v128_t l =
        wasm_f32x4_pmax(wasm_f32x4_pmin(bq_round_small(wasm_f32x4_mul(code_iscale, x[i])), hi), lo);
    codes[i] = wasm_v128_andnot(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(l, off)), tiny);
  }
  *scale_out = wasm_v128_andnot(scale, tiny);
}

/* make_q3_quants fits (do_rmse; Q3_K without weights, weights x*x) of G groups of four
 * sub-blocks (x[g * n + i]): the symmetric first scale, then up to five passes over the elements
 * in order, each moving one code at a time where that improves the fit. A pass is a chain of
 * dependent steps (each move changes the sums the next element sees), so the G groups' chains are
 * interleaved. A lane whose pass changes nothing would change nothing in another, so passes run
 * while some lane changes. Codes L + nmax (0..2*nmax-1), or 0 and scale 0 for a fit whose largest
 * |x| is below 1e-15. */
BQ_FIT_INLINE void bq_q3_fit4(const v128_t *x, int G, int n, int nmax, v128_t *scale_out,
                              v128_t *codes) {
  const v128_t zero = wasm_f32x4_splat(0);
  const v128_t lo = wasm_f32x4_splat((float)-nmax), hi = wasm_f32x4_splat((float)(nmax - 1));
  const v128_t ilo = wasm_i32x4_splat(-nmax), ihi = wasm_i32x4_splat(nmax - 1);
  v128_t L[4 * 16], w[4 * 16], wxv[4 * 16], sumlx[4], suml2[4], tiny[4];
  for (int g = 0; g < G; g++) {
    const v128_t *xg = x + g * n;
    v128_t amax = zero, max = zero;
    for (int i = 0; i < n; i++) {
      const v128_t ax = wasm_f32x4_abs(xg[i]), up = wasm_f32x4_gt(ax, amax);
      amax = wasm_v128_bitselect(ax, amax, up);
      max = wasm_v128_bitselect(xg[i], max, up);
    }
    tiny[g] = wasm_f32x4_lt(amax, wasm_f32x4_splat(1e-15f));
    const v128_t iscale = wasm_f32x4_div(wasm_f32x4_splat((float)-nmax), max);
    sumlx[g] = suml2[g] = zero;
    for (int i = 0; i < n; i++) {
      const int k = g * n + i;
      L[k] =
          wasm_f32x4_pmax(wasm_f32x4_pmin(bq_round_small(wasm_f32x4_mul(iscale, xg[i])), hi), lo);
      w[k] = wasm_f32x4_mul(xg[i], xg[i]);
      wxv[k] = wasm_f32x4_mul(w[k], xg[i]);
      sumlx[g] = wasm_f32x4_add(sumlx[g], wasm_f32x4_mul(wxv[k], L[k]));
      suml2[g] = wasm_f32x4_add(suml2[g], wasm_f32x4_mul(wasm_f32x4_mul(w[k], L[k]), L[k]));
    }
  }
  for (int itry = 0; itry < 5; itry++) {
    v128_t changed = wasm_i32x4_splat(0);
    for (int i = 0; i < n; i++)
      for (int g = 0; g < G; g++) {
        const int k = g * n + i;
        /* ggml: if (slx > 0) ... if (new_l != L[i]) ... if (sl2 > 0 && better) move it */
        const v128_t slx0 = wasm_f32x4_sub(sumlx[g], wasm_f32x4_mul(wxv[k], L[k]));
        const v128_t sl20 =
            wasm_f32x4_sub(suml2[g], wasm_f32x4_mul(wasm_f32x4_mul(w[k], L[k]), L[k]));
        const v128_t nl = wasm_f32x4_convert_i32x4(wasm_i32x4_min(
            wasm_i32x4_max(bq_nearest_i32x4(wasm_f32x4_div(wasm_f32x4_mul(x[k], sl20), slx0)), ilo),
            ihi));
        const v128_t slx = wasm_f32x4_add(slx0, wasm_f32x4_mul(wxv[k], nl));
        const v128_t sl2 = wasm_f32x4_add(sl20, wasm_f32x4_mul(wasm_f32x4_mul(w[k], nl), nl));
        const v128_t better =
            wasm_f32x4_gt(wasm_f32x4_mul(wasm_f32x4_mul(slx, slx), suml2[g]),
                          wasm_f32x4_mul(wasm_f32x4_mul(sumlx[g], sumlx[g]), sl2));
        const v128_t move =
            wasm_v128_and(wasm_v128_and(wasm_f32x4_gt(slx0, zero), wasm_f32x4_ne(nl, L[k])),
                          wasm_v128_and(wasm_f32x4_gt(sl2, zero), better));
        L[k] = wasm_v128_bitselect(nl, L[k], move);
        sumlx[g] = wasm_v128_bitselect(slx, sumlx[g], move);
        suml2[g] = wasm_v128_bitselect(sl2, suml2[g], move);
        changed = wasm_v128_or(changed, move);
      }
    if (!wasm_v128_any_true(changed)) break;
  }
  const v128_t off = wasm_f32x4_splat((float)nmax);
  for (int g = 0; g < G; g++) {
    for (int i = 0; i < n; i++)
      codes[g * n + i] =
          wasm_v128_andnot(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(L[g * n + i], off)), tiny[g]);
    const v128_t s =
        wasm_v128_and(wasm_f32x4_div(sumlx[g], suml2[g]), wasm_f32x4_gt(suml2[g], zero));
    scale_out[g] = wasm_v128_andnot(s, tiny[g]);
  }
}

/* A K-quant's re-quantization of one sub-block of n values (a multiple of 16) against its stored
 * scale dl and min dm: the bytes clamp(nearest_int((x + dm) / dl), 0, nmax). */
BQ_FIT_INLINE void bq_requant_affine(const float *x, int n, float dl, float dm, int nmax,
                                     uint8_t *L) {
  const v128_t vdl = wasm_f32x4_splat(dl), vdm = wasm_f32x4_splat(dm);
  const v128_t z = wasm_i32x4_splat(0), hi = wasm_i32x4_splat(nmax);
  for (int i = 0; i < n; i += 16) {
    v128_t c[4];
    for (int k = 0; k < 4; k++)
      c[k] = wasm_i32x4_min(
          wasm_i32x4_max(bq_nearest_i32x4(wasm_f32x4_div(
                             wasm_f32x4_add(wasm_v128_load(x + i + 4 * k), vdm), vdl)),
                         z),
          hi);
    wasm_v128_store(L + i, wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(c[0], c[1]),
                                                   wasm_i16x8_narrow_i32x4(c[2], c[3])));
  }
}

/* The same for the symmetric K-quants: the bytes clamp(nearest_int(x / dl), lo, hi) + off. */
BQ_FIT_INLINE void bq_requant_symmetric(const float *x, int n, float dl, int lo, int hi, int off,
                                        uint8_t *L) {
  const v128_t vdl = wasm_f32x4_splat(dl), vlo = wasm_i32x4_splat(lo), vhi = wasm_i32x4_splat(hi);
  const v128_t voff = wasm_i32x4_splat(off);
  for (int i = 0; i < n; i += 16) {
    v128_t c[4];
    for (int k = 0; k < 4; k++)
      c[k] = wasm_i32x4_add(
          wasm_i32x4_min(
              wasm_i32x4_max(bq_nearest_i32x4(wasm_f32x4_div(wasm_v128_load(x + i + 4 * k), vdl)),
                             vlo),
              vhi),
          voff);
    wasm_v128_store(L + i, wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(c[0], c[1]),
                                                   wasm_i16x8_narrow_i32x4(c[2], c[3])));
  }
}

/* The row loop of a weighted SIMD128 quantizer of 32-element blocks (bytes each), ggml's
 * quantize_<t> with quant_weights: a row whose values, or weights whose values, hold a NaN or an
 * Inf goes to the reference step `ref` block by block; the others get their sigma2 (sum of x^2
 * in order, over cols) and their blocks four at a time through `group`, which quantizes the four
 * blocks at x (weights qw) into out, of which the first nb are real (a row's last group gets
 * copies of its last block as the others). */
typedef void bq_imat_group32(const float *x, const float *qw, float sigma2, int nb, uint8_t *out);
BQ_FIT_INLINE void bq_imat_rows32_simd(const float *x, void *y, size_t rows, size_t cols,
                                       const float *qw, size_t bytes, bq_imat_group32 *group,
                                       bq_imat_block32 *ref) {
  const int bad_w = bq_any_nonfinite(qw, cols);
  uint8_t *out = y;
  for (size_t r = 0; r < rows; r++, x += cols, out += cols / 32 * bytes) {
    if (bad_w || bq_any_nonfinite(x, cols)) {
      bq_imat_rows32(x, out, 1, cols, qw, bytes, ref);
      continue;
    }
    float sum_x2 = 0;
    for (size_t i = 0; i < cols; i++) sum_x2 += x[i] * x[i];
    const float sigma2 = sum_x2 / (float)cols;
    const size_t nb = cols / 32;
    size_t b = 0;
    for (; b + 4 <= nb; b += 4) group(x + 32 * b, qw + 32 * b, sigma2, 4, out + b * bytes);
    if (b < nb) {
      float xs[128], ws[128];
      uint8_t tail[4 * 64];
      for (size_t k = 0; k < 4; k++) {
        const size_t src = b + k < nb ? b + k : nb - 1;
        memcpy(xs + 32 * k, x + 32 * src, 128);
        memcpy(ws + 32 * k, qw + 32 * src, 128);
      }
      group(xs, ws, sigma2, (int)(nb - b), tail);
      memcpy(out + b * bytes, tail, (nb - b) * bytes);
    }
  }
}

/* The weights of four transposed sub-blocks: w = qw * sqrt(x*x + sigma2), element by element. */
BQ_FIT_INLINE void bq_fit4_weights(const v128_t *x, const v128_t *qw, int n, float sigma2,
                                   v128_t *w) {
  const v128_t s2 = wasm_f32x4_splat(sigma2);
  for (int i = 0; i < n; i++)
    w[i] = wasm_f32x4_mul(qw[i], wasm_f32x4_sqrt(wasm_f32x4_add(s2, wasm_f32x4_mul(x[i], x[i]))));
}

/* Four 32-element blocks of Q4_0 or Q5_0 (nmax 8, 16), their weights from qw (32 per block) and
 * sigma2, fitted symmetrically in the four lanes: each block's codes in L[j], its scale in d[j]. */
BQ_FIT_INLINE void bq_symmetric_blocks4(const float *x, const float *qw, float sigma2, int nmax,
                                        uint8_t L[4][32], float d[4]) {
  v128_t xt[32], qt[32], wt[32], wx[32], codes[32], scale;
  bq_fit4_load(x, 32, 32, xt);
  bq_fit4_load(qw, 32, 32, qt);
  bq_fit4_weights(xt, qt, 32, sigma2, wt);
  for (int i = 0; i < 32; i++) wx[i] = wasm_f32x4_mul(wt[i], xt[i]);
  bq_symmetric_fit4(xt, wt, wx, 32, nmax, &scale, codes);
  bq_fit4_store_codes(codes, 32, L[0], 32);
  wasm_v128_store(d, scale);
}

/* The same for Q4_1 or Q5_1 (codes 0..nmax: 15, 31), fitted affinely: codes in L[j], scale in
 * d[j] and m[j] the block's m (the fit's min negated). */
BQ_FIT_INLINE void bq_affine_blocks4(const float *x, const float *qw, float sigma2, int nmax,
                                     uint8_t L[4][32], float d[4], float m[4]) {
  v128_t xt[32], qt[32], wt[32], codes[32], scale, the_min;
  bq_fit4_load(x, 32, 32, xt);
  bq_fit4_load(qw, 32, 32, qt);
  bq_fit4_weights(xt, qt, 32, sigma2, wt);
  bq_affine_fit4(xt, wt, 32, nmax, BQ_IMAT_RMIN, BQ_IMAT_RDELTA, BQ_IMAT_NSTEP, 0, &scale, &the_min,
                 codes);
  bq_fit4_store_codes(codes, 32, L[0], 32);
  wasm_v128_store(d, scale);
  wasm_v128_store(m, wasm_f32x4_neg(the_min));
}

/* The grid types' codes of 4 trials (lanes: inverse scales id) of one magnitude v, as int32 lanes:
 * nearest_int(0.5 * (id * v - 1)) clamped to 0..kmax, as ggml's IQ2/IQ3 searches round them.
 * nearest_int is the low 23 bits of t + 1.5 * 2^23, minus 2^22. The callers send sub-blocks
 * holding a NaN to the reference; a NaN of 0 * Inf is canonical, code 0 as there. */
static inline v128_t bq_grid_codes4(v128_t id, float v, int kmax) {
  const v128_t t = wasm_f32x4_mul(
      wasm_f32x4_splat(0.5f),
      wasm_f32x4_sub(wasm_f32x4_mul(id, wasm_f32x4_splat(v)), wasm_f32x4_splat(1.0f)));
  const v128_t r = wasm_i32x4_sub(
      wasm_v128_and(wasm_f32x4_add(t, wasm_f32x4_splat(12582912.0f)), wasm_i32x4_splat(0x7FFFFF)),
      wasm_i32x4_splat(0x400000));
  return wasm_i32x4_min(wasm_i32x4_max(r, wasm_i32x4_splat(0)), wasm_i32x4_splat(kmax));
}

#endif
