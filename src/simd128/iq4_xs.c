/* IQ4_XS SIMD128 kernels: dequantize bit-exact with ref/iq4_xs.c; dot with Q8_K from the same
 * exact integer sub-block sums and per-sub-block terms (d4d8 * (ls - 32)) * sumi, summed in 4
 * lanes, one vector per super-block (so a dot cut at super-blocks equals the uncut one, and a
 * matvec row, from the same terms, equals the dot of that row). Each 32-element sub-block is laid
 * out as an IQ4_NL block's codes (iq.h). */
#include "iq.h"

enum {
  XS = sizeof(block_iq4_xs),
  XD = offsetof(block_iq4_xs, d),
  XSH = offsetof(block_iq4_xs, scales_h),
  XSL = offsetof(block_iq4_xs, scales_l),
  XQS = offsetof(block_iq4_xs, qs)
};
static_assert(XSL == XSH + 2 && XQS == XSL + 4, "scales_h, scales_l, qs in a row");

/* The super-block's 8 sub-block scales minus 32 as i32 lanes (sub-blocks 0..3 in *s0, 4..7 in
 * *s1). The 6-bit scales are assembled as 8 bytes of a u64 in integer code (the nibbles of
 * scales_l interleaved, the 2-bit fields of scales_h spread to a byte each by three
 * shift-or-mask steps), splat into a vector and swizzled into i32 lanes. (Per-lane shift counts
 * written as vector multiplies were scalarised by clang 14.) */
static inline uint64_t spread4x8(uint32_t x) { /* byte k of x -> byte 2k */
  uint64_t v = x;
  v = (v | v << 16) & 0x0000FFFF0000FFFFull;
  return (v | v << 8) & 0x00FF00FF00FF00FFull;
}
static inline void scales(const uint8_t *p, v128_t *s0, v128_t *s1) {
  const uint32_t sl = bq_rd32(p + XSL);
  uint64_t h = bq_rd16(p + XSH);
  h = (h | h << 24) & 0x000000FF000000FFull;
  h = (h | h << 12) & 0x000F000F000F000Full;
  h = (h | h << 6) & 0x0303030303030303ull;
  const uint64_t ls = spread4x8(sl & 0x0F0F0F0Fu) | spread4x8(sl >> 4 & 0x0F0F0F0Fu) << 8 | h << 4;
  const v128_t v = wasm_i64x2_splat((int64_t)ls), off = wasm_i32x4_const(32, 32, 32, 32);
  *s0 = wasm_i32x4_sub(wasm_i8x16_swizzle(v, BQ_LOW(0)), off);
  *s1 = wasm_i32x4_sub(wasm_i8x16_swizzle(v, BQ_LOW(4)), off);
}

/* Stores dl * 2^-24 of the 8 sub-blocks into the K-quant scale slots (kq45.h) and returns where to
 * read them splat. dl = d * (ls - 32) is exact in the reference (an fp16 d times an integer below
 * 2^6), and so is (d * 2^-24) * (ls - 32) here: the same number. */
static inline const float *slots(const uint8_t *p) {
  v128_t s0, s1;
  scales(p, &s0, &s1);
  const v128_t d24 = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(p + XD)) * 0x1p-24f);
  wasm_v128_store(bq_kq_slot, wasm_f32x4_mul(d24, wasm_f32x4_convert_i32x4(s0)));
  wasm_v128_store(bq_kq_slot + 4, wasm_f32x4_mul(d24, wasm_f32x4_convert_i32x4(s1)));
  return bq_kq_slot_alias;
}

static_assert(sizeof(((block_iq4_xs *)0)->qs) == 16 * 8, "8 sub-blocks of 16 code bytes");

BQ_DEQUANTIZE_PROTO(iq4_xs, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const bq_k k = bq_consts();
  const uint8_t *p = x;
  const size_t nb = n / QK_K, run = BQ_TOUCH_WEIGHTS / QK_K;
  for (size_t i = 0; i < nb; i++, p += XS) {
    bq_touch_run(p, i, nb, run, XS); /* simd.h */
    const float *sl = slots(p);
    /* Not unrolled: each pass stores its 128 bytes in order (see kq45.h). */
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, y += 32) {
      v128_t w[8];
      bq_iq4_weights(&k, BQ_IQ4NL_VALUES, p + XQS + 16 * ib, wasm_v128_load32_splat(sl + ib), w);
      for (int j = 0; j < 8; j++) {
        wasm_v128_store(y + 4 * j, w[j]);
        BQ_STORE_ORDER(); /* in ascending order (simd.h) */
      }
    }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(iq4_xs, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const bq_k k = bq_consts();
  const uint8_t *p = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / QK_K; i++, p += XS) {
    const float *sl = slots(p);
    v128_t q[2] = {wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f)};
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, v += 32) {
      v128_t w[8];
      bq_iq4_weights(&k, BQ_IQ4NL_VALUES, p + XQS + 16 * ib, wasm_v128_load32_splat(sl + ib), w);
      for (int j = 0; j < 8; j++) w[j] = wasm_f32x4_mul(w[j], wasm_v128_load(v + 4 * j));
      q[ib & 1] = wasm_f32x4_add(q[ib & 1], bq_sum8(w));
    }
    sum = wasm_f32x4_add(sum, wasm_f32x4_add(q[0], q[1]));
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

/* The four float terms of one super-block against Q8_K codes act with scale yd: lane l is
 * dl_l * sumi_l + dl_{l+4} * sumi_{l+4}, dl = (d * yd) * (ls - 32) as the reference rounds it.
 * The weights' i8 values are split into even and odd i16 lanes like the activations (kq45.h). */
BQ_KQ_INLINE v128_t terms(const bq_k *k, const bq_kq *c, const uint8_t *p, bq_kq_act act, float yd,
                          const uint8_t *bsums) {
  (void)c, (void)bsums;
  v128_t P[8];
  /* Not unrolled: V8 hoists the loads of unrolled copies and then spills. */
  _Pragma("clang loop unroll(disable)") for (int ib = 0; ib < 8; ib++) {
    v128_t lo, hi, e, o;
    bq_iq4_values(k, BQ_IQ4NL_VALUES, wasm_v128_load(p + XQS + 16 * ib), &lo, &hi);
    bq_kq_act16(act, 2 * ib, &e, &o);
    v128_t s = wasm_i32x4_dot_i16x8(wasm_i16x8_shr(wasm_i16x8_shl(lo, 8), 8), e);
    s = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(wasm_i16x8_shr(lo, 8), o));
    bq_kq_act16(act, 2 * ib + 1, &e, &o);
    s = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(wasm_i16x8_shr(wasm_i16x8_shl(hi, 8), 8), e));
    P[ib] = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(wasm_i16x8_shr(hi, 8), o));
  }
  v128_t s0, s1;
  scales(p, &s0, &s1);
  const v128_t d4d8 = wasm_f32x4_splat(bq_h2f_fast(bq_rd16(p + XD)) * yd);
  const v128_t dl0 = wasm_f32x4_mul(d4d8, wasm_f32x4_convert_i32x4(s0)),
               dl1 = wasm_f32x4_mul(d4d8, wasm_f32x4_convert_i32x4(s1));
  return wasm_f32x4_add(
      wasm_f32x4_mul(dl0, wasm_f32x4_convert_i32x4(bq_hsum4_i32(P[0], P[1], P[2], P[3]))),
      wasm_f32x4_mul(dl1, wasm_f32x4_convert_i32x4(bq_hsum4_i32(P[4], P[5], P[6], P[7]))));
}

BQ_DOT_PROTO(iq4_xs, q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dot(x, y, n / QK_K, XS, acc, terms, bq_iq4_xs_dot_q8_K__ref);
  return BQ_OK;
}

BQ_MATVEC_PROTO(iq4_xs, q8_K, __simd128) {
  return bq_kq_matvec(w, rows, cols, x, y, XS, terms, bq_iq4_xs_dot_q8_K__simd128);
}
