/* Q5_K SIMD128 kernels: dequantize bit-exact with ref/q5_K.c; dots with exact integer sub-block
 * sums and four float terms per super-block (kq45.h). */
#include "kq45.h"

enum {
  XS = sizeof(block_q5_K),
  XD = offsetof(block_q5_K, d),
  XDM = offsetof(block_q5_K, dmin),
  XSC = offsetof(block_q5_K, scales),
  XQH = offsetof(block_q5_K, qh),
  XQS = offsetof(block_q5_K, qs)
};

/* Bit j of each byte of qh moved to bit 4 (0x10): one shift within u16 lanes, which moves no other
 * byte's bit to bit 4 or 12 for shifts up to 4 left or 3 right. */
static inline v128_t hbit(const bq_kq *c, v128_t qh, int j) {
  return wasm_v128_and(j <= 4 ? wasm_i16x8_shl(qh, 4 - j) : wasm_u16x8_shr(qh, j - 4), c->b10);
}

/* The 5-bit codes of sub-blocks 2s (lo) and 2s+1 (hi), elements 16h..16h+15, as bytes. */
static inline void codes(const bq_k *k, const bq_kq *c, const uint8_t *p, int s, int h, v128_t *lo,
                         v128_t *hi) {
  const v128_t q = wasm_v128_load(p + XQS + 32 * s + 16 * h), qh = wasm_v128_load(p + XQH + 16 * h);
  *lo = wasm_v128_or(wasm_v128_and(q, k->nib), hbit(c, qh, 2 * s));
  *hi = wasm_v128_or(bq_hi4(k, q), hbit(c, qh, 2 * s + 1));
}

static inline void pair(const bq_k *k, const bq_kq *c, const uint8_t *p, int s, v128_t dl0,
                        v128_t ml0, v128_t dl1, v128_t ml1, v128_t w[16]) {
  for (int h = 0; h < 2; h++) {
    v128_t lo, hi;
    codes(k, c, p, s, h, &lo, &hi);
    bq_kq_weights16(lo, dl0, ml0, w + 4 * h);
    bq_kq_weights16(hi, dl1, ml1, w + 8 + 4 * h);
  }
}

static inline void weights(const bq_k *k, const bq_kq *c, const uint8_t *p, v128_t w[64]) {
  v128_t dl[2], ml[2];
  bq_kq_dl_ml(bq_kq_scales(p + XSC), bq_h2f_fast(bq_rd16(p + XD)), bq_h2f_fast(bq_rd16(p + XDM)),
              dl, ml);
  pair(k, c, p, 0, BQ_LANE(dl[0], 0), BQ_LANE(ml[0], 0), BQ_LANE(dl[0], 1), BQ_LANE(ml[0], 1), w);
  pair(k, c, p, 1, BQ_LANE(dl[0], 2), BQ_LANE(ml[0], 2), BQ_LANE(dl[0], 3), BQ_LANE(ml[0], 3),
       w + 16);
  pair(k, c, p, 2, BQ_LANE(dl[1], 0), BQ_LANE(ml[1], 0), BQ_LANE(dl[1], 1), BQ_LANE(ml[1], 1),
       w + 32);
  pair(k, c, p, 3, BQ_LANE(dl[1], 2), BQ_LANE(ml[1], 2), BQ_LANE(dl[1], 3), BQ_LANE(ml[1], 3),
       w + 48);
}

BQ_DEQUANTIZE_PROTO(q5_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dequantize(x, y, n / QK_K, XS, weights);
  return BQ_OK;
}

BQ_DOT_PROTO(q5_K, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dot_f32(x, y, n / QK_K, XS, acc, weights);
  return BQ_OK;
}

/* The integer products of each sub-block: byte codes split into even and odd u16 lanes. */
static inline v128_t terms(const bq_k *k, const bq_kq *c, const uint8_t *p, bq_kq_act act, float yd,
                           const uint8_t *bsums) {
  v128_t P[8];
  for (int s = 0; s < 4; s++) {
    v128_t lo = wasm_i32x4_splat(0), hi = lo;
    for (int h = 0; h < 2; h++) {
      v128_t cl, ch, e, o;
      codes(k, c, p, s, h, &cl, &ch);
      bq_kq_act16(act, 4 * s + h, &e, &o);
      lo = wasm_i32x4_add(lo, wasm_i32x4_dot_i16x8(wasm_v128_and(cl, c->lo8), e));
      lo = wasm_i32x4_add(lo, wasm_i32x4_dot_i16x8(wasm_u16x8_shr(cl, 8), o));
      bq_kq_act16(act, 4 * s + 2 + h, &e, &o);
      hi = wasm_i32x4_add(hi, wasm_i32x4_dot_i16x8(wasm_v128_and(ch, c->lo8), e));
      hi = wasm_i32x4_add(hi, wasm_i32x4_dot_i16x8(wasm_u16x8_shr(ch, 8), o));
    }
    P[2 * s] = lo;
    P[2 * s + 1] = hi;
  }
  return bq_kq_terms(P, bq_kq_scales(p + XSC), bsums, bq_h2f_fast(bq_rd16(p + XD)) * yd,
                     bq_h2f_fast(bq_rd16(p + XDM)) * yd);
}

BQ_DOT_PROTO(q5_K, q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dot(x, y, n / QK_K, XS, acc, terms);
  return BQ_OK;
}

BQ_MATVEC_PROTO(q5_K, q8_K, __simd128) {
  return bq_kq_matvec(w, rows, cols, x, y, XS, terms, bq_q5_K_dot_q8_K__simd128);
}
