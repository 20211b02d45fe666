/* The Q4_0, Q4_1, Q5_0 and Q5_1 quantizers, four blocks at a time. Bit-exact with the reference:
 * the same float operations per element, and C's float -> int casts pinned the same way. Groups
 * whose results depend on ggml's sequential scans or on its NaN cast rules are left to the
 * reference: any NaN or Inf, Q4_0/Q5_0 blocks whose largest magnitude occurs with both signs (the
 * first one wins) or is zero, Q4_1/Q5_1 blocks whose min or max is zero (which zero, +0 or -0,
 * is kept depends on the order), and scales so small that 1/d overflows. */
#ifndef BQ_SIMD_Q45_H
#define BQ_SIMD_Q45_H

#include "simd.h"

/* (int)v for v in [0, 2^23), v finite: trunc, then the magic 2^23 turns the integer-valued float
 * into integer bits. (i32x4.trunc_sat, with its NaN and overflow rules, costs V8 many
 * instructions; the groups where they would matter go to the reference.) */
static inline v128_t bq_trunc_small(const bq_k *k, v128_t v) {
  return wasm_i32x4_sub(wasm_f32x4_add(wasm_f32x4_trunc(v), k->magic), k->magic);
}

/* One block's codes as bytes: elements 0..15 in *lo, 16..31 in *hi. Symmetric formats: codes
 * min(lim, (int)(x * id + off)); affine: (int)((x - mn) * id + 0.5), clamped to lim for Q4_1 only
 * (ggml's Q5_1 cast is unclamped, and its codes never exceed 31 for finite inputs). */
static inline void bq_q45_codes(const bq_k *k, const float *x, v128_t id, v128_t mn, int affine,
                                float off, int lim, int clamp, v128_t *lo, v128_t *hi) {
  v128_t c[8];
  const v128_t vo = wasm_f32x4_splat(off), vl = wasm_i32x4_splat(lim);
  for (int j = 0; j < 8; j++) {
    v128_t v = wasm_v128_load(x + 4 * j);
    if (affine) v = wasm_f32x4_sub(v, mn);
    c[j] = bq_trunc_small(k, wasm_f32x4_add(wasm_f32x4_mul(v, id), vo));
    if (clamp) c[j] = wasm_i32x4_min(c[j], vl);
  }
  *lo = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(c[0], c[1]),
                                wasm_i16x8_narrow_i32x4(c[2], c[3]));
  *hi = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(c[4], c[5]),
                                wasm_i16x8_narrow_i32x4(c[6], c[7]));
}

/* Four blocks at x to o (bs bytes each; d at 0, m, qh and qs at the given offsets). five: 5-bit
 * codes with qh; affine: Q4_1/Q5_1 (d, m). Returns 0, writing nothing, when the group must go to
 * the reference. */
static inline int bq_q45_quant4(const bq_k *k, const float *x, uint8_t *o, size_t bs, size_t m_off,
                                size_t qh_off, size_t qs_off, int five, int affine) {
  /* pmax/pmin (one instruction each in V8) are exact maxima for finite values; a running sum
   * catches NaN and Inf (and, rarely, a sum that overflows, which just takes the slow path). */
  v128_t mx[4], mn[4], sum = wasm_f32x4_splat(0.0f);
  for (int b = 0; b < 4; b++) {
    const float *p = x + BQ_B32 * b;
    mx[b] = mn[b] = wasm_v128_load(p);
    sum = wasm_f32x4_add(sum, mx[b]);
    for (int j = 1; j < 8; j++) {
      const v128_t v = wasm_v128_load(p + 4 * j);
      mx[b] = wasm_f32x4_pmax(mx[b], v);
      mn[b] = wasm_f32x4_pmin(mn[b], v);
      sum = wasm_f32x4_add(sum, v);
    }
  }
  const v128_t MX = bq_hmax4_f32(mx[0], mx[1], mx[2], mx[3]);
  const v128_t MN = bq_hmin4_f32(mn[0], mn[1], mn[2], mn[3]);
  v128_t ok = wasm_f32x4_lt(wasm_f32x4_abs(sum), k->inf32);
  const v128_t zero = wasm_f32x4_splat(0.0f);
  v128_t d;
  if (affine) {
    ok = wasm_v128_andnot(ok, wasm_v128_or(wasm_f32x4_eq(MX, zero), wasm_f32x4_eq(MN, zero)));
    d = wasm_f32x4_div(wasm_f32x4_sub(MX, MN), wasm_f32x4_splat(five ? 31.0f : 15.0f));
  } else {
    const v128_t nmn = wasm_f32x4_neg(MN);
    ok = wasm_v128_andnot(ok, wasm_f32x4_eq(MX, nmn)); /* a tie of magnitudes, or all zero */
    const v128_t maxv = wasm_v128_bitselect(MX, MN, wasm_f32x4_gt(MX, nmn));
    d = wasm_f32x4_div(maxv, wasm_f32x4_splat(five ? -16.0f : -8.0f));
  }
  const v128_t id = wasm_v128_andnot(wasm_f32x4_div(k->one, d), wasm_f32x4_eq(d, zero));
  ok = wasm_v128_and(ok, wasm_f32x4_lt(wasm_f32x4_abs(id), k->inf32)); /* d subnormal: id = Inf */
  if (!wasm_i32x4_all_true(ok)) return 0;
  const v128_t hd = bq_f2h_x4(k, d);
  bq_store_u16x4(o, bs, hd);
  if (affine) {
    const v128_t hm = bq_f2h_x4(k, MN);
    bq_store_u16x4(o + m_off, bs, hm);
  }
  const float off = affine ? 0.5f : five ? 16.5f : 8.5f;
  const int lim = five ? 31 : 15, clamp = !(five && affine);
  v128_t ids[4] = {BQ_LANE(id, 0), BQ_LANE(id, 1), BQ_LANE(id, 2), BQ_LANE(id, 3)};
  v128_t mns[4] = {BQ_LANE(MN, 0), BQ_LANE(MN, 1), BQ_LANE(MN, 2), BQ_LANE(MN, 3)};
  for (int b = 0; b < 4; b++) {
    v128_t lo, hi;
    bq_q45_codes(k, x + BQ_B32 * b, ids[b], mns[b], affine, off, lim, clamp, &lo, &hi);
    uint8_t *blk = o + b * bs;
    if (five) {
      /* Bit 4 of each code moved to bit 7 (a 16-bit shift keeps it inside its byte), then one
       * bitmask per 16 codes: bit j of qh is the 5th bit of element j. */
      const uint32_t qh = (uint32_t)wasm_i8x16_bitmask(wasm_i16x8_shl(lo, 3)) |
                          ((uint32_t)wasm_i8x16_bitmask(wasm_i16x8_shl(hi, 3)) << 16);
      memcpy(blk + qh_off, &qh, 4);
      lo = wasm_v128_and(lo, k->nib);
      hi = wasm_v128_and(hi, k->nib);
    }
    wasm_v128_store(blk + qs_off, wasm_v128_or(lo, wasm_i16x8_shl(hi, 4)));
  }
  return 1;
}

/* The whole quantizer: groups of 4 blocks, the rest (and refused groups) by the reference. BS, M,
 * QH, QS: the block's bytes and field offsets (M, QH unused by the formats without them). */
#define BQ_Q45_QUANTIZE(t, BS, M, QH, QS, FIVE, AFFINE)                      \
  static_assert(BQ_OFF(t, d) == 0, #t ": d first");                          \
  BQ_QUANTIZE_PROTO(t, __simd128) {                                          \
    if (n % BQ_BLK_##t) return BQ_EINVAL;                                    \
    const bq_k k = bq_consts();                                              \
    const size_t nb = n / BQ_BLK_##t;                                        \
    uint8_t *o = y;                                                          \
    size_t i = 0;                                                            \
    for (; i + 4 <= nb; i += 4, x += 4 * BQ_B32, o += 4 * (BS))              \
      if (!bq_q45_quant4(&k, x, o, (BS), (M), (QH), (QS), (FIVE), (AFFINE))) \
        bq_##t##_quantize__ref(x, o, 4 * BQ_B32);                            \
    if (i < nb) bq_##t##_quantize__ref(x, o, (nb - i) * BQ_B32);             \
    return BQ_OK;                                                            \
  }

#endif
