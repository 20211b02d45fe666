/* Q4_K SIMD128 kernels (quantize: ../imat/simd128/kquants.h): dequantize bit-exact with ref/q4_K.c;
 * dots with exact integer sub-block sums and four float terms per super-block (kq45.h). */
#include "../imat/simd128/kquants.h" /* the quantizer */
#include "kq45.h"

enum {
  XS = sizeof(block_q4_K),
  XD = offsetof(block_q4_K, d),
  XDM = offsetof(block_q4_K, dmin),
  XSC = offsetof(block_q4_K, scales),
  XQS = offsetof(block_q4_K, qs)
};

/* Sub-blocks 2s and 2s+1: the low and high nibbles of qs[32s..32s+31]. A high nibble is taken as
 * the byte with its low nibble cleared, 16 times the code, against d * scale * 2^-4: the product is
 * the same real number, so it rounds the same (one operation fewer than shifting it down). */
BQ_KQ_INLINE void pair(const bq_k *k, const bq_kq *c, const uint8_t *p, const float *sl, int s,
                       v128_t st[2], v128_t w[16]) {
  (void)c, (void)st;
  const v128_t dl0 = wasm_v128_load32_splat(sl + 2 * s),
               ml0 = wasm_v128_load32_splat(sl + 8 + 2 * s);
  const v128_t dl1 = wasm_v128_load32_splat(sl + 16 + 2 * s + 1),
               ml1 = wasm_v128_load32_splat(sl + 8 + 2 * s + 1);
  _Pragma("clang loop unroll(full)") for (int h = 0; h < 2; h++) {
    const v128_t q = wasm_v128_load(p + XQS + 32 * s + 16 * h);
    bq_kq_weights16(wasm_v128_and(q, k->nib), dl0, ml0, w + 4 * h);
    bq_kq_weights16(wasm_v128_and(q, k->hi_nib), dl1, ml1, w + 8 + 4 * h);
  }
}

BQ_KQ_INLINE const float *slots(const bq_k *k, const bq_kq *c, const uint8_t *p) {
  return bq_kq_dl_ml(bq_kq_scales(k, c, p + XSC), bq_h2f_fast(bq_rd16(p + XD)),
                     bq_h2f_fast(bq_rd16(p + XDM)));
}

BQ_DEQUANTIZE_PROTO(q4_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dequantize(x, y, n / QK_K, XS, 0, slots, pair);
  return BQ_OK;
}

BQ_DOT_PROTO(q4_K, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dot_f32(x, y, n / QK_K, XS, 0, acc, slots, pair);
  return BQ_OK;
}

/* The integer products of each sub-block, codes taken from u16 lanes already widened (4 bits at
 * a time: even and odd bytes, low and high nibbles) against activations in the same order. */
BQ_KQ_INLINE v128_t terms(const bq_k *k, const bq_kq *c, const uint8_t *p, bq_kq_act act, float yd,
                          const uint8_t *bsums) {
  v128_t P[8];
  /* Not unrolled: V8 hoists the loads of unrolled copies and then spills. */
  _Pragma("clang loop unroll(disable)") for (int s = 0; s < 4; s++) {
    v128_t lo = wasm_i32x4_splat(0), hi = lo;
    _Pragma("clang loop unroll(full)") for (int h = 0; h < 2; h++) {
      const v128_t q = wasm_v128_load(p + XQS + 32 * s + 16 * h);
      v128_t e, o;
      bq_kq_act16(act, 4 * s + h, &e, &o);
      lo = wasm_i32x4_add(lo, wasm_i32x4_dot_i16x8(wasm_v128_and(q, k->nib16), e));
      lo = wasm_i32x4_add(lo,
                          wasm_i32x4_dot_i16x8(wasm_v128_and(wasm_u16x8_shr(q, 8), k->nib16), o));
      bq_kq_act16(act, 4 * s + 2 + h, &e, &o);
      hi = wasm_i32x4_add(hi,
                          wasm_i32x4_dot_i16x8(wasm_v128_and(wasm_u16x8_shr(q, 4), k->nib16), e));
      hi = wasm_i32x4_add(hi, wasm_i32x4_dot_i16x8(wasm_u16x8_shr(q, 12), o));
    }
    P[2 * s] = lo;
    P[2 * s + 1] = hi;
  }
  return bq_kq_terms(P, bq_kq_scales(k, c, p + XSC), bsums, bq_h2f_fast(bq_rd16(p + XD)) * yd,
                     bq_h2f_fast(bq_rd16(p + XDM)) * yd);
}

BQ_DOT_PROTO(q4_K, q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dot(x, y, n / QK_K, XS, acc, terms, bq_q4_K_dot_q8_K__ref);
  return BQ_OK;
}

BQ_MATVEC_PROTO(q4_K, q8_K, __simd128) {
  return bq_kq_matvec(w, rows, cols, x, y, XS, terms, bq_q4_K_dot_q8_K__simd128);
}

/* quantize_row_q4_K_ref byte for byte, the sub-block fits four at a time. */
BQ_KQ_SIMD_QUANTIZE(q4_K, bq_q4_K_simd)
