/* IQ1_S SIMD128 kernels. Dequantize, bit-exact with ref/iq1_s.c: per sub-block, four 8-byte grid
 * rows (index qs | 3 bits of qh) of values -1, 0, 1, plus a delta of +-1/8 for the whole
 * sub-block, times dl = d * (2s + 1) (iq.h, bq_iq1_store). The dot with Q8_K: ggml's two exact
 * integer sums per super-block, sum of (2s + 1) * grid . q8 (the codes prepared in pair order,
 * iqdot.h) and sum of (2s + 1) * sign * (the sub-block's two Q8_K bsums, which ggml reads here),
 * then its float term, added to acc[0] in order: the reference's result, to the bit. */
#include "iqdot.h"

enum {
  XS = sizeof(block_iq1_s),
  XD = offsetof(block_iq1_s, d),
  XQS = offsetof(block_iq1_s, qs),
  XQH = offsetof(block_iq1_s, qh),
  YBS = offsetof(block_q8_K, bsums)
};

/* Sub-block ib's grid rows, delta bytes and weight 2s + 1 (both halves). */
static inline void sub(const uint8_t *b, int ib, v128_t g[2], v128_t e[2], int32_t ls[2]) {
  const uint8_t *a = b + XQS + 4 * ib;
  const uint32_t h = bq_rd16(b + XQH + 2 * ib);
  bq_iq_grid_rows(bq_iq1s_grid, a[0] | (h & 7) << 8, a[1] | (h >> 3 & 7) << 8,
                  a[2] | (h >> 6 & 7) << 8, a[3] | (h >> 9 & 7) << 8, &g[0], &g[1]);
  e[0] = e[1] = wasm_i8x16_splat(h & 0x8000 ? -1 : 1);
  ls[0] = ls[1] = (int32_t)(2 * (h >> 12 & 7) + 1);
}

static inline float scale_d(const uint8_t *b) { return bq_h2f_fast(bq_rd16(b + XD)); }

/* The reference's term D * yd * ((float)sumi + 0.125f * (float)sumi1), in every lane. */
static inline v128_t term(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  (void)k;
  v128_t acc = wasm_i32x4_splat(0);
  int32_t sumi1 = 0;
  for (int ib = 0; ib < 8; ib++) {
    v128_t g[2], e[2];
    int32_t ls[2];
    sub(b, ib, g, e, ls);
    const v128_t p =
        wasm_i32x4_add(iqg_dot16(g[0], a->q + 32 * ib), iqg_dot16(g[1], a->q + 32 * ib + 16));
    acc = wasm_i32x4_add(acc, wasm_i32x4_mul(p, wasm_i32x4_splat(ls[0])));
    const int32_t bs = bq_rd16s(yb + YBS + 4 * ib) + bq_rd16s(yb + YBS + 4 * ib + 2);
    sumi1 += ls[0] * (bq_rd16(b + XQH + 2 * ib) & 0x8000 ? -bs : bs);
  }
  float yd;
  memcpy(&yd, yb + offsetof(block_q8_K, d), 4);
  const v128_t sum =
      wasm_f32x4_add(wasm_f32x4_convert_i32x4(kq_hsum(acc)),
                     wasm_f32x4_mul(wasm_f32x4_splat(0.125f), wasm_f32x4_splat((float)sumi1)));
  return wasm_f32x4_mul(wasm_f32x4_splat(scale_d(b) * yd), sum);
}

BQ_DOT_PROTO(iq1_s, q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  kq_dot(x, y, n / QK_K, XS, acc, term);
  return BQ_OK;
}

BQ_MATVEC_PROTO(iq1_s, q8_K, __simd128) {
  return kq_matvec(w, rows, cols, x, y, XS, term, bq_iq1_s_dot_q8_K__simd128);
}

BQ_DOT_PROTO(iq1_s, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  iq1_dot_f32(x, y, n / QK_K, XS, acc, scale_d, sub);
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(iq1_s, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  iq1_dequantize(x, y, n / QK_K, XS, scale_d, sub);
  return BQ_OK;
}
