/* Q2_K SIMD128 kernels (quantize: ../imat/simd128/kquants.h); same results as ref/q2_K.c
 * (dequantize bit for bit; dot: the reference's per-super-block term dall * isum - dmin * summs
 * from the same exact integer sums). */
#include "../imat/simd128/kquants.h" /* the quantizer */
#include "kq236.h"

enum {
  XS = sizeof(block_q2_K),
  XSC = offsetof(block_q2_K, scales),
  XQS = offsetof(block_q2_K, qs),
  XD = offsetof(block_q2_K, d),
  XDM = offsetof(block_q2_K, dmin),
  YBS = offsetof(block_q8_K, bsums)
};

/* d * scale and dmin * min of the 16 sub-blocks, as the reference rounds them: each 4-bit code in
 * the low byte of an i32 lane (zeros above), converted exactly. */
static inline void sub_scales(const kq_k *k, const uint8_t *b, v128_t dl[4], v128_t ml[4]) {
  const v128_t s = wasm_v128_load(b + XSC);
  const v128_t sc = wasm_v128_and(s, k->nib), mn = wasm_v128_and(wasm_u16x8_shr(s, 4), k->nib);
  const v128_t d = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(b + XD)));
  const v128_t dm = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(b + XDM)));
  dl[0] = wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(sc, BQ_LOW(0))));
  dl[1] = wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(sc, BQ_LOW(4))));
  dl[2] = wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(sc, BQ_LOW(8))));
  dl[3] = wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(sc, BQ_LOW(12))));
  ml[0] = wasm_f32x4_mul(dm, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(mn, BQ_LOW(0))));
  ml[1] = wasm_f32x4_mul(dm, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(mn, BQ_LOW(4))));
  ml[2] = wasm_f32x4_mul(dm, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(mn, BQ_LOW(8))));
  ml[3] = wasm_f32x4_mul(dm, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(mn, BQ_LOW(12))));
}

/* The 16 values of a sub-block from its 2-bit codes q (bytes): dl * q - ml, as the reference (each
 * code in the low byte of an i32 lane, converted exactly). */
static inline void values(v128_t q, v128_t dl, v128_t ml, v128_t w[4]) {
  w[0] = wasm_f32x4_sub(
      wasm_f32x4_mul(dl, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(q, BQ_LOW(0)))), ml);
  w[1] = wasm_f32x4_sub(
      wasm_f32x4_mul(dl, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(q, BQ_LOW(4)))), ml);
  w[2] = wasm_f32x4_sub(
      wasm_f32x4_mul(dl, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(q, BQ_LOW(8)))), ml);
  w[3] = wasm_f32x4_sub(
      wasm_f32x4_mul(dl, wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(q, BQ_LOW(12)))), ml);
}

/* The codes of group g (bytes 0..3) of the 16 code bytes v. */
static inline v128_t group(const kq_k *k, v128_t v, int g) {
  return wasm_v128_and(g ? wasm_u16x8_shr(v, 2 * g) : v, k->m03);
}

BQ_DEQUANTIZE_PROTO(q2_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const kq_k k = kq_consts();
  const uint8_t *b = x;
  const size_t nb = n / QK_K, run = BQ_TOUCH_WEIGHTS / QK_K;
  for (size_t i = 0; i < nb; i++, b += XS, y += QK_K) {
    bq_touch_run(b, i, nb, run, XS); /* simd.h */
    v128_t dl[4], ml[4];
    sub_scales(&k, b, dl, ml);
#pragma clang loop unroll(full)
    for (int h = 0; h < 2; h++)
#pragma clang loop unroll(full)
      for (int c = 0; c < 2; c++) {
        const v128_t v = wasm_v128_load(b + XQS + 32 * h + 16 * c);
        for (int g = 0; g < 4; g++) {
          const int j = 8 * h + 2 * g + c;
          v128_t w[4];
          values(group(&k, v, g), kq_lane(dl[j >> 2], j), kq_lane(ml[j >> 2], j), w);
          for (int t = 0; t < 4; t++) wasm_v128_store(y + 16 * j + 4 * t, w[t]);
        }
      }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q2_K, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const kq_k k = kq_consts();
  const uint8_t *b = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / QK_K; i++, b += XS, v += QK_K) {
    v128_t dl[4], ml[4],
        s[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
    sub_scales(&k, b, dl, ml);
#pragma clang loop unroll(full)
    for (int h = 0; h < 2; h++)
#pragma clang loop unroll(full)
      for (int c = 0; c < 2; c++) {
        const v128_t q = wasm_v128_load(b + XQS + 32 * h + 16 * c);
        for (int g = 0; g < 4; g++) {
          const int j = 8 * h + 2 * g + c;
          v128_t w[4];
          values(group(&k, q, g), kq_lane(dl[j >> 2], j), kq_lane(ml[j >> 2], j), w);
          for (int t = 0; t < 4; t++)
            s[t] = wasm_f32x4_add(s[t], wasm_f32x4_mul(w[t], wasm_v128_load(v + 16 * j + 4 * t)));
        }
      }
    sum = wasm_f32x4_add(sum, kq_sum4(s[0], s[1], s[2], s[3]));
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

/* The reference's term (in every lane) of the block at b against the Q8_K block at yb (its codes
 * prepared in a): isum = sum scale * q * q8 exactly (codes taken out of u16 lanes, even elements by
 * a mask, odd ones by a shift), summs = sum min * bsum from the Q8_K block's bsums, as ggml reads
 * them. */
static inline v128_t term(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  const v128_t s = wasm_v128_load(b + XSC);
  v128_t r = kq_pass_order(wasm_v128_and(s, k->nib)), acc = wasm_i32x4_splat(0);
#pragma clang loop unroll(disable)
  for (int hc = 0; hc < 4; hc++, r = kq_next_pass(r)) {
    const int h = hc >> 1, c = hc & 1;
    const v128_t v = wasm_v128_load(b + XQS + 32 * h + 16 * c);
    const int16_t *ah = a->q + 128 * h + 16 * c;
    v128_t p[4];
    for (int g = 0; g < 4; g++) {
      const v128_t e = wasm_v128_and(g ? wasm_u16x8_shr(v, 2 * g) : v, k->w03);
      const v128_t o =
          g == 3 ? wasm_u16x8_shr(v, 14) : wasm_v128_and(wasm_u16x8_shr(v, 2 * g + 8), k->w03);
      p[g] = wasm_i32x4_add(wasm_i32x4_dot_i16x8(e, wasm_v128_load(ah + 32 * g)),
                            wasm_i32x4_dot_i16x8(o, wasm_v128_load(ah + 32 * g + 8)));
    }
    acc = wasm_i32x4_add(acc, kq_scale4(p, r, 0));
  }
  const v128_t is = kq_hsum(acc);
  const v128_t mn = wasm_v128_and(wasm_u16x8_shr(s, 4), k->nib);
  const v128_t summs = kq_hsum(wasm_i32x4_add(
      wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(mn), wasm_v128_load(yb + YBS)),
      wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(mn), wasm_v128_load(yb + YBS + 16))));
  float yd;
  memcpy(&yd, yb + offsetof(block_q8_K, d), 4);
  const float dall = yd * bq_h2f_fast(bq_rd16(b + XD)), dmin = yd * bq_h2f_fast(bq_rd16(b + XDM));
  return wasm_f32x4_sub(wasm_f32x4_mul(wasm_f32x4_splat(dall), wasm_f32x4_convert_i32x4(is)),
                        wasm_f32x4_mul(wasm_f32x4_splat(dmin), wasm_f32x4_convert_i32x4(summs)));
}

BQ_DOT_PROTO(q2_K, q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  kq_dot(x, y, n / QK_K, XS, acc, term);
  return BQ_OK;
}

BQ_MATVEC_PROTO(q2_K, q8_K, __simd128) {
  return kq_matvec(w, rows, cols, x, y, XS, term, bq_q2_K_dot_q8_K__simd128);
}

/* quantize_row_q2_K_ref byte for byte, the sub-block fits four at a time. */
BQ_KQ_SIMD_QUANTIZE(q2_K, bq_q2_K_simd)
