/* Q3_K SIMD128 kernels (quantize: ../imat/simd128/kquants.h); same results as ref/q3_K.c
 * (dequantize bit for bit; dot: exact integer super-block sums, one float term per super-block). */
#include "../imat/simd128/kquants.h" /* the quantizer */
#include "kq236.h"

enum {
  XS = sizeof(block_q3_K),
  XHM = offsetof(block_q3_K, hmask),
  XQS = offsetof(block_q3_K, qs),
  XSC = offsetof(block_q3_K, scales),
  XD = offsetof(block_q3_K, d)
};
static_assert(XSC >= 4 && XSC + 12 == XD, "scales: 4 bytes before them, d right after them");

/* The 16 scales minus 32, as signed bytes. The 12 scale bytes s are read with the 4 bytes before
 * them (a 16-byte load ending where d starts: one that covered d was also used for d, whose bits
 * clang then took out with a lane extract). Low 4 bits: s[j] & 15 for j < 8, s[j - 8] >> 4
 * after; high 2 bits: bits 2(j/4).. of s[8 + j%4], brought to bits 4-5 by one i32 multiply (lane k,
 * bytes s[8..11], times 2^(6 - 2k), shifted right by 2). */
static inline v128_t scales(const kq_k *k, const uint8_t *b) {
  const v128_t v = wasm_v128_load(b + XSC - 4);
  const v128_t a =
      wasm_i8x16_swizzle(v, wasm_i8x16_const(4, 5, 6, 7, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  const v128_t hb = wasm_i8x16_swizzle(
      v, wasm_i8x16_const(12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15));
  const v128_t lo =
      wasm_v128_or(wasm_v128_and(a, k->lo64), wasm_v128_and(wasm_u16x8_shr(a, 4), k->hi64));
  const v128_t hi = wasm_v128_and(wasm_u32x4_shr(wasm_i32x4_mul(hb, k->q3mul), 2), k->m30);
  return wasm_i8x16_sub(wasm_v128_or(lo, hi), k->b32);
}

/* The 3-bit codes (bytes 0..7, the value plus 4) of group g of half h, from the 16 code bytes v and
 * the 16 hmask bytes m of the same chunk: bit 4h + g of m, moved to bit 2. */
static inline v128_t codes(const kq_k *k, v128_t v, v128_t m, int h, int g) {
  const int s = 4 * h + g - 2;
  const v128_t hb = s < 0 ? wasm_i16x8_shl(m, -s) : s ? wasm_u16x8_shr(m, s) : m;
  return wasm_v128_or(wasm_v128_and(g ? wasm_u16x8_shr(v, 2 * g) : v, k->m03),
                      wasm_v128_and(hb, k->m04));
}

/* d * (scale - 32) * 2^-24 of the 16 sub-blocks, in four vectors: each signed scale byte in the
 * top byte of an i32 lane (converted exactly) times d * 2^-48 (exact: d is 0 or at least 2^-24),
 * one rounding of the real product, which is the reference's d * (scale - 32) times 2^-24 exactly
 * (no underflow: |d * (scale - 32)| is 0 or at least 2^-24). */
static inline void sub_scales(const kq_k *k, const uint8_t *b, v128_t dl[4]) {
  bq_top_bytes_mul(scales(k, b), wasm_f32x4_splat(bq_h2f_fast(bq_rd16(b + XD)) * 0x1p-48f), dl);
}

/* The 16 values of a sub-block from its codes q and dl = d * (scale - 32) * 2^-24: q - 4 as a
 * signed byte in the top byte of an i32 lane, converted (exactly (q - 4) * 2^24) and multiplied by
 * dl: the reference's real product dl * (q - 4), so the same rounding. */
static inline void values(const kq_k *k, v128_t q, v128_t dl, v128_t w[4]) {
  bq_top_bytes_mul(wasm_i8x16_sub(q, k->m04), dl, w);
}

BQ_DEQUANTIZE_PROTO(q3_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const kq_k k = kq_consts();
  const uint8_t *b = x;
  const size_t nb = n / QK_K, run = BQ_TOUCH_WEIGHTS / QK_K;
  for (size_t i = 0; i < nb; i++, b += XS, y += QK_K) {
    bq_touch_run(b, i, nb, run, XS); /* simd.h */
    v128_t dl[4];
    sub_scales(&k, b, dl);
#pragma clang loop unroll(full)
    for (int h = 0; h < 2; h++)
#pragma clang loop unroll(full)
      for (int c = 0; c < 2; c++) {
        const v128_t v = wasm_v128_load(b + XQS + 32 * h + 16 * c);
        const v128_t m = wasm_v128_load(b + XHM + 16 * c);
        for (int g = 0; g < 4; g++) {
          const int j = 8 * h + 2 * g + c;
          v128_t w[4];
          values(&k, codes(&k, v, m, h, g), kq_lane(dl[j >> 2], j), w);
          for (int t = 0; t < 4; t++) wasm_v128_store(y + 16 * j + 4 * t, w[t]);
        }
      }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q3_K, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const kq_k k = kq_consts();
  const uint8_t *b = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / QK_K; i++, b += XS, v += QK_K) {
    v128_t dl[4],
        s[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
    sub_scales(&k, b, dl);
#pragma clang loop unroll(full)
    for (int h = 0; h < 2; h++)
#pragma clang loop unroll(full)
      for (int c = 0; c < 2; c++) {
        const v128_t q = wasm_v128_load(b + XQS + 32 * h + 16 * c);
        const v128_t m = wasm_v128_load(b + XHM + 16 * c);
        for (int g = 0; g < 4; g++) {
          const int j = 8 * h + 2 * g + c;
          v128_t w[4];
          values(&k, codes(&k, q, m, h, g), kq_lane(dl[j >> 2], j), w);
          for (int t = 0; t < 4; t++)
            s[t] = wasm_f32x4_add(s[t], wasm_f32x4_mul(w[t], wasm_v128_load(v + 16 * j + 4 * t)));
        }
      }
    sum = wasm_f32x4_add(sum, kq_sum4(s[0], s[1], s[2], s[3]));
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

/* The exact integer sum over the block at b of (scale - 32) * (q - 4) * activation, in every
 * lane. */
static inline v128_t isum(const kq_k *k, const uint8_t *b, const kq_act *a) {
  const v128_t sc = scales(k, b);
  v128_t r = kq_pass_order(sc), acc = wasm_i32x4_splat(0);
#pragma clang loop unroll(disable)
  for (int hc = 0; hc < 4; hc++, r = kq_next_pass(r)) {
    const int h = hc >> 1, c = hc & 1;
    const v128_t v = wasm_v128_load(b + XQS + 32 * h + 16 * c);
    const v128_t m = wasm_v128_load(b + XHM + 16 * c);
    const int16_t *ah = a->q + 128 * h + 16 * c;
    v128_t p[4];
    for (int g = 0; g < 4; g++) p[g] = kq_dot16(k, codes(k, v, m, h, g), ah + 32 * g);
    acc = wasm_i32x4_add(acc, kq_scale4(p, r, 1));
  }
  /* sum sc_j (S_j - 4 A_j) */
  return kq_hsum(wasm_i32x4_sub(acc, wasm_i32x4_shl(kq_act_scaled(a, sc), 2)));
}

/* The term of a super-block whose dd is huge, Inf or NaN, as ggml forms it (kq236.h). */
__attribute__((noinline)) static float big_term(const uint8_t *b, const uint8_t *yb, float dd) {
  block_q3_K a;
  memcpy(&a, b, sizeof a);
  int32_t w[QK_K];
  for (int e = 0; e < QK_K; e++) {
    const int q = (a.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    const int code = q - (a.hmask[e % 32] >> (e / 32) & 1 ? 0 : 4);
    w[e] = (bq_q3_K_scale(a.scales, e / 16) - 32) * code;
  }
  return kq_lanes_term(w, yb, dd);
}

/* isum of the block, as KQ_D_KERNELS calls it. */
#define ISUM(k, b, yb, a) isum(k, b, a)
KQ_D_KERNELS(q3_K, term, ISUM, __simd128)
#undef ISUM

/* quantize_row_q3_K_ref byte for byte, the sub-block fits four at a time. */
BQ_KQ_SIMD_QUANTIZE(q3_K, bq_q3_K_simd)
