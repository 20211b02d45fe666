/* TQ2_0 SIMD128 kernels: quantize and dequantize bit-exact with ref/tq2_0.c (tq.h: blocks with a
 * NaN take the reference quantizer); the dot with Q8_K from the same exact integer sum and the
 * same float term per super-block, added to acc[0] in order (so it equals the reference's, and a
 * matvec row, from the same terms, the dot of that row). Byte j of qs holds the codes of elements
 * j, j + 32, j + 64, j + 96 of its half in bit pairs 0, 2, 4, 6 (Q2_K's layout, kq236.h): 16 code
 * bytes give the 16 consecutive elements 128h + 32g + 16c + (0..15) of group g. */
#include "tq.h"

enum { XS = sizeof(block_tq2_0), XQS = offsetof(block_tq2_0, qs), XD = offsetof(block_tq2_0, d) };

tq_const_table bq_tq_consts = {
    .m03 = {0x03030303, 0x03030303, 0x03030303, 0x03030303},
    .one8 = {0x01010101, 0x01010101, 0x01010101, 0x01010101},
    .flip = {0x80808080, 0x80808080, 0x80808080, 0x80808080},
    /* TQ1_0's trit thresholds, on bytes r - 128 (tq1_0.c): -43 and 42 */
    .t1 = {0xD5D5D5D5, 0xD5D5D5D5, 0xD5D5D5D5, 0xD5D5D5D5},
    .t2 = {0x2A2A2A2A, 0x2A2A2A2A, 0x2A2A2A2A, 0x2A2A2A2A},
    .fe = {0xFEFEFEFE, 0xFEFEFEFE, 0xFEFEFEFE, 0xFEFEFEFE}, /* a byte's bits 1-7 */
};

/* The 16 values of group g from the code bytes v: code - 1 as bytes, times d (bq_tq_d24). */
static inline void values(const tq_k *k, v128_t v, int g, v128_t d, v128_t w[4]) {
  const v128_t c = wasm_v128_and(g ? wasm_u16x8_shr(v, 2 * g) : v, k->m03);
  bq_top_bytes_mul(wasm_i8x16_sub(c, k->one8), d, w);
}

BQ_DEQUANTIZE_PROTO(tq2_0, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const tq_k k = tq_consts();
  const uint8_t *b = x;
  const size_t nb = n / QK_K, run = BQ_TOUCH_WEIGHTS / QK_K;
  for (size_t i = 0; i < nb; i++, b += XS, y += QK_K) {
    bq_touch_run(b, i, nb, run, XS); /* simd.h */
    const v128_t d = bq_tq_d24(bq_rd16(b + XD));
#pragma clang loop unroll(full)
    for (int hc = 0; hc < 4; hc++) {
      const v128_t v = wasm_v128_load(b + XQS + 16 * hc);
      for (int g = 0; g < 4; g++) {
        v128_t w[4];
        values(&k, v, g, d, w);
        float *o = y + 128 * (hc >> 1) + 32 * g + 16 * (hc & 1);
        for (int t = 0; t < 4; t++) wasm_v128_store(o + 4 * t, w[t]);
      }
    }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(tq2_0, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const tq_k k = tq_consts();
  const uint8_t *b = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / QK_K; i++, b += XS, v += QK_K) {
    const v128_t d = bq_tq_d24(bq_rd16(b + XD));
    v128_t s[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0),
                   wasm_f32x4_splat(0)};
#pragma clang loop unroll(disable)
    for (int hc = 0; hc < 4; hc++) {
      const v128_t q = wasm_v128_load(b + XQS + 16 * hc);
      for (int g = 0; g < 4; g++) {
        v128_t w[4];
        values(&k, q, g, d, w);
        bq_tq_mul_add(w, v + 128 * (hc >> 1) + 32 * g + 16 * (hc & 1), s);
      }
    }
    sum = wasm_f32x4_add(sum, kq_sum4(s[0], s[1], s[2], s[3]));
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

/* The reference's term (float)sumi * (yd * xd), in every lane, of the block at b against the
 * Q8_K block at yb, its codes prepared in a (pair order, kq236.h). sumi = sum code * q8 - sum q8:
 * the codes are taken out of u16 lanes, shifted once per group; the even element's code (bits
 * 0-1) by a mask, the odd one's (bits 8-9) by a mask too, so it is 256 times the code and its
 * products sum apart, shifted down at the end (exact: every term is a multiple of 256; at most 16
 * dots of 2 * 768 * 128 per lane). The sum of the activations comes from the preparation's
 * sub-block sums (not Q8_K's bsums, which the reference does not read). */
static inline v128_t term(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  const v128_t w300 = wasm_i16x8_shl(k->w03, 8); /* bits 8-9 of each u16 lane */
  v128_t lo = wasm_i32x4_splat(0), hi = wasm_i32x4_splat(0);
#pragma clang loop unroll(full)
  for (int hc = 0; hc < 4; hc++) {
    const v128_t v = wasm_v128_load(b + XQS + 16 * hc);
    const int16_t *ah = a->q + 128 * (hc >> 1) + 16 * (hc & 1);
    for (int g = 0; g < 4; g++) {
      const v128_t s = g ? wasm_u16x8_shr(v, 2 * g) : v;
      lo = wasm_i32x4_add(
          lo, wasm_i32x4_dot_i16x8(wasm_v128_and(s, k->w03), wasm_v128_load(ah + 32 * g)));
      hi = wasm_i32x4_add(
          hi, wasm_i32x4_dot_i16x8(wasm_v128_and(s, w300), wasm_v128_load(ah + 32 * g + 8)));
    }
  }
  const v128_t asum = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_load(a->sum), k->one16),
                                     wasm_i32x4_dot_i16x8(wasm_v128_load(a->sum + 8), k->one16));
  const v128_t is =
      kq_hsum(wasm_i32x4_sub(wasm_i32x4_add(lo, wasm_i32x4_shr(hi, 8)), asum)); /* kq236.h */
  float yd;
  memcpy(&yd, yb + offsetof(block_q8_K, d), 4);
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(is),
                        wasm_f32x4_splat(yd * bq_h2f_fast(bq_rd16(b + XD))));
}

BQ_DOT_PROTO(tq2_0, q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  kq_dot(x, y, n / QK_K, XS, acc, term);
  return BQ_OK;
}

BQ_MATVEC_PROTO(tq2_0, q8_K, __simd128) {
  return kq_matvec(w, rows, cols, x, y, XS, term, bq_tq2_0_dot_q8_K__simd128);
}

BQ_QUANTIZE_PROTO(tq2_0, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    const float *xb = x + i * QK_K;
    uint8_t *out = (uint8_t *)y + i * sizeof(block_tq2_0);
    if (bq_tq_has_nan(xb)) {
      bq_tq2_0_quantize__ref(xb, out, QK_K);
      continue;
    }
    const v128_t amax = bq_tq_amax(xb);
    uint8_t t[QK_K] __attribute__((aligned(16)));
    bq_tq_trits(xb, bq_tq_inverse(amax), t);
    for (int h = 0; h < 2; h++)
      for (int j = 0; j < 32; j += 16) {
        const uint8_t *r = t + 128 * h + j;
        v128_t b = wasm_v128_load(r);
        b = wasm_v128_or(b, wasm_i8x16_shl(wasm_v128_load(r + 32), 2));
        b = wasm_v128_or(b, wasm_i8x16_shl(wasm_v128_load(r + 64), 4));
        b = wasm_v128_or(b, wasm_i8x16_shl(wasm_v128_load(r + 96), 6));
        wasm_v128_store(out + offsetof(block_tq2_0, qs) + 32 * h + j, b);
      }
    bq_tq_store_d(out + offsetof(block_tq2_0, d), amax);
  }
  return BQ_OK;
}
