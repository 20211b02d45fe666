/* Q5_K SIMD128 kernels (quantize: ../imat/simd128/kquants.h): dequantize bit-exact with ref/q5_K.c;
 * dots with exact integer sub-block sums and four float terms per super-block (kq45.h). */
#include "../imat/simd128/kquants.h" /* the quantizer */
#include "kq45.h"

enum {
  XS = sizeof(block_q5_K),
  XD = offsetof(block_q5_K, d),
  XDM = offsetof(block_q5_K, dmin),
  XSC = offsetof(block_q5_K, scales),
  XQH = offsetof(block_q5_K, qh),
  XQS = offsetof(block_q5_K, qs)
};

/* The 5-bit codes of sub-blocks 2s (lo) and 2s+1 (hi), elements 16h..16h+15, as bytes, given qh
 * of those elements shifted right by 2s within u16 lanes (hs): bits 0 and 1 of each byte are then
 * the fifth bits of the two sub-blocks (bits the shift moves across bytes land in bits 6-7 only),
 * and shifts by 4 and 3 move them to bit 4 of their byte. Constant shifts only: clang 14 scalarises
 * a variable one. */
BQ_KQ_INLINE void codes(const bq_k *k, const bq_kq *c, v128_t q, v128_t hs, v128_t *lo,
                        v128_t *hi) {
  *lo = wasm_v128_or(wasm_v128_and(q, k->nib), wasm_v128_and(wasm_i16x8_shl(hs, 4), c->b10));
  *hi = wasm_v128_or(bq_hi4(k, q), wasm_v128_and(wasm_i16x8_shl(hs, 3), c->b10));
}

BQ_KQ_INLINE void pair(const bq_k *k, const bq_kq *c, const uint8_t *p, const float *sl, int s,
                       v128_t st[2], v128_t w[16]) {
  const v128_t dl0 = wasm_v128_load32_splat(sl + 2 * s),
               ml0 = wasm_v128_load32_splat(sl + 8 + 2 * s);
  const v128_t dl1 = wasm_v128_load32_splat(sl + 2 * s + 1),
               ml1 = wasm_v128_load32_splat(sl + 8 + 2 * s + 1);
  _Pragma("clang loop unroll(full)") for (int h = 0; h < 2; h++) {
    v128_t lo, hi;
    codes(k, c, wasm_v128_load(p + XQS + 32 * s + 16 * h), st[h], &lo, &hi);
    st[h] = wasm_u16x8_shr(st[h], 2);
    bq_kq_weights16(lo, dl0, ml0, w + 4 * h);
    bq_kq_weights16(hi, dl1, ml1, w + 8 + 4 * h);
  }
}

BQ_KQ_INLINE const float *slots(const bq_k *k, const bq_kq *c, const uint8_t *p) {
  return bq_kq_dl_ml(bq_kq_scales(k, c, p + XSC), bq_h2f_fast(bq_rd16(p + XD)),
                     bq_h2f_fast(bq_rd16(p + XDM)));
}

BQ_DEQUANTIZE_PROTO(q5_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dequantize(x, y, n / QK_K, XS, XQH, slots, pair);
  return BQ_OK;
}

BQ_DOT_PROTO(q5_K, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dot_f32(x, y, n / QK_K, XS, XQH, acc, slots, pair);
  return BQ_OK;
}

/* The integer products of each sub-block: byte codes split into even and odd u16 lanes. */
BQ_KQ_INLINE v128_t terms(const bq_k *k, const bq_kq *c, const uint8_t *p, bq_kq_act act, float yd,
                          const uint8_t *bsums) {
  v128_t P[8];
  v128_t hs0 = wasm_v128_load(p + XQH), hs1 = wasm_v128_load(p + XQH + 16);
  /* Not unrolled: V8 hoists the loads of unrolled copies and then spills. */
  _Pragma("clang loop unroll(disable)") for (int s = 0; s < 4; s++) {
    v128_t cl, ch, e, o, lo, hi;
    codes(k, c, wasm_v128_load(p + XQS + 32 * s), hs0, &cl, &ch);
    bq_kq_act16(act, 4 * s, &e, &o);
    lo = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_and(cl, c->lo8), e),
                        wasm_i32x4_dot_i16x8(wasm_u16x8_shr(cl, 8), o));
    bq_kq_act16(act, 4 * s + 2, &e, &o);
    hi = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_and(ch, c->lo8), e),
                        wasm_i32x4_dot_i16x8(wasm_u16x8_shr(ch, 8), o));
    codes(k, c, wasm_v128_load(p + XQS + 32 * s + 16), hs1, &cl, &ch);
    bq_kq_act16(act, 4 * s + 1, &e, &o);
    lo = wasm_i32x4_add(lo, wasm_i32x4_dot_i16x8(wasm_v128_and(cl, c->lo8), e));
    lo = wasm_i32x4_add(lo, wasm_i32x4_dot_i16x8(wasm_u16x8_shr(cl, 8), o));
    bq_kq_act16(act, 4 * s + 3, &e, &o);
    hi = wasm_i32x4_add(hi, wasm_i32x4_dot_i16x8(wasm_v128_and(ch, c->lo8), e));
    hi = wasm_i32x4_add(hi, wasm_i32x4_dot_i16x8(wasm_u16x8_shr(ch, 8), o));
    P[2 * s] = lo;
    P[2 * s + 1] = hi;
    hs0 = wasm_u16x8_shr(hs0, 2);
    hs1 = wasm_u16x8_shr(hs1, 2);
  }
  return bq_kq_terms(P, bq_kq_scales(k, c, p + XSC), bsums, bq_h2f_fast(bq_rd16(p + XD)) * yd,
                     bq_h2f_fast(bq_rd16(p + XDM)) * yd);
}

BQ_DOT_PROTO(q5_K, q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dot(x, y, n / QK_K, XS, acc, terms, bq_q5_K_dot_q8_K__ref);
  return BQ_OK;
}

BQ_MATVEC_PROTO(q5_K, q8_K, __simd128) {
  return bq_kq_matvec(w, rows, cols, x, y, XS, terms, bq_q5_K_dot_q8_K__simd128);
}

/* quantize_row_q5_K_ref byte for byte, the sub-block fits four at a time. */
BQ_KQ_SIMD_QUANTIZE(q5_K, bq_q5_K_simd)
