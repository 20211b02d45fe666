/* IQ4_NL and IQ4_XS SIMD128 quantizers: bit-exact with ../iq4.c.
 *
 * The scale fit tries 16 inverse scales (the start and the 15 trials); here they are the 16 lanes
 * of four vectors, each lane summing its sumqx and sumq2 over the 32 elements in element order, as
 * ggml does for one trial, so every lane's sums are ggml's bit for bit; the choice among them is
 * the scalar scan of the reference. A fit whose scale comes out NaN is redone by the reference,
 * which gives the NaN x86-64's bits (the sums are the same otherwise: only a NaN's bits can
 * differ in wasm arithmetic).
 *
 * The nearest table entry: best_index_int8 over kvalues_iq4nl (binary search, then the nearer
 * of two neighbours by x - v[l] < v[l+1] - x, ties up) equals 15 minus the number of midpoints
 * (v[k] + v[k+1]) / 2 that x is below, for every float x, NaN (15) and +-Inf included: checked on
 * all 2^32 bit patterns. Fifteen compares a lane, no branch. */
#include <wasm_simd128.h>

#include "../imat.h"

/* The midpoints of kvalues_iq4nl (exact: halves of sums of small integers). */
static const float MID[15] = {-115.5f, -93.5f, -74.0f, -57.0f, -42.0f, -28.5f, -16.0f, -4.5f,
                              7.0f,    19.0f,  31.5f,  45.5f,  61.0f,  79.0f,  101.0f};

/* best_index_int8 of 4 lanes, as int32 lanes. */
static inline v128_t best_index4(v128_t a) {
  v128_t n = wasm_i32x4_splat(15);
  for (int k = 0; k < 15; k++) n = wasm_i32x4_add(n, wasm_f32x4_lt(a, wasm_f32x4_splat(MID[k])));
  return n;
}

/* kvalues_iq4nl[l] of 4 int32 lanes l, as floats: a byte swizzle (indexes 0xFF give 0), then the
 * byte sign-extended. */
static inline v128_t value4(v128_t l) {
  const v128_t kv = wasm_v128_load(bq_kvalues_iq4nl);
  const v128_t b = wasm_i8x16_swizzle(kv, wasm_v128_or(l, wasm_i32x4_splat((int32_t)0xFFFFFF00)));
  return wasm_f32x4_convert_i32x4(wasm_i32x4_shr(wasm_i32x4_shl(b, 24), 24));
}

static float fit(const float *x, const float *w) {
  float max;
  if (!bq_iq4_max(x, &max)) return 0.0f;
  const float v0 = (float)bq_kvalues_iq4nl[0];
  float ids[16];
  ids[0] = 1 / (-max / v0);
  for (int itry = -7; itry <= 7; itry++) ids[8 + itry] = (float)(itry + bq_kvalues_iq4nl[0]) / max;
  v128_t id[4], sx[4], s2[4];
  for (int c = 0; c < 4; c++) {
    id[c] = wasm_v128_load(ids + 4 * c);
    sx[c] = s2[c] = wasm_f32x4_splat(0.0f);
  }
  for (int j = 0; j < 32; j++) {
    const v128_t xj = wasm_f32x4_splat(x[j]), wj = wasm_f32x4_splat(w[j]);
    for (int c = 0; c < 4; c++) {
      const v128_t q = value4(best_index4(wasm_f32x4_mul(id[c], xj)));
      const v128_t wq = wasm_f32x4_mul(wj, q);
      sx[c] = wasm_f32x4_add(sx[c], wasm_f32x4_mul(wq, xj));
      s2[c] = wasm_f32x4_add(s2[c], wasm_f32x4_mul(wq, q));
    }
  }
  float sumqx[16], sumq2[16];
  for (int c = 0; c < 4; c++) {
    wasm_v128_store(sumqx + 4 * c, sx[c]);
    wasm_v128_store(sumq2 + 4 * c, s2[c]);
  }
  float d = sumq2[0] > 0 ? sumqx[0] / sumq2[0] : 0.0f;
  float best = d * sumqx[0];
  for (int t = 1; t < 16; t++)
    if (sumq2[t] > 0 && sumqx[t] * sumqx[t] > best * sumq2[t]) {
      d = sumqx[t] / sumq2[t];
      best = d * sumqx[t];
    }
  return d == d ? d : bq_iq4_fit__ref(x, w);
}

/* The weights of 32 values (bq_iq4_weights; a NaN weight's bits never reach the bytes: it makes
 * sumq2 NaN, and the fit's scale then 0 or the reference's). */
static void weights(const float *x, const float *qw, float sigma2, float *w) {
  const v128_t s = wasm_f32x4_splat(sigma2);
  for (int j = 0; j < 32; j += 4) {
    const v128_t v = wasm_v128_load(x + j), x2 = wasm_f32x4_mul(v, v);
    wasm_v128_store(
        w + j,
        qw ? wasm_f32x4_mul(wasm_v128_load(qw + j), wasm_f32x4_sqrt(wasm_f32x4_add(s, x2))) : x2);
  }
}

/* The 16 code bytes of 32 values x * id (bq_iq4_pack's layout). */
static void codes(const float *x, float id, uint8_t *qs) {
  const v128_t vid = wasm_f32x4_splat(id);
  v128_t l[8];
  for (int k = 0; k < 8; k++) l[k] = best_index4(wasm_f32x4_mul(vid, wasm_v128_load(x + 4 * k)));
  const v128_t lo = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(l[0], l[1]),
                                            wasm_i16x8_narrow_i32x4(l[2], l[3]));
  const v128_t hi = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(l[4], l[5]),
                                            wasm_i16x8_narrow_i32x4(l[6], l[7]));
  /* hi's bytes are at most 15, so a 16-bit shift moves each within its byte */
  wasm_v128_store(qs, wasm_v128_or(lo, wasm_i16x8_shl(hi, 4)));
}

static const bq_iq4_kernels simd = {weights, fit, codes};

BQ_QUANTIZE_ROWS_PROTO(iq4_nl, __simd128) { return bq_iq4_nl_rows(&simd, x, y, rows, cols, qw); }
BQ_QUANTIZE_ROWS_PROTO(iq4_xs, __simd128) { return bq_iq4_xs_rows(&simd, x, y, rows, cols, qw); }

BQ_QUANTIZE_PROTO(iq4_nl, __simd128) { return bq_iq4_nl_quantize_rows__simd128(x, y, 1, n, NULL); }
BQ_QUANTIZE_PROTO(iq4_xs, __simd128) { return bq_iq4_xs_quantize_rows__simd128(x, y, 1, n, NULL); }
