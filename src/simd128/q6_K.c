/* Q6_K SIMD128 kernels (quantize: ../imat/simd128/kquants.h); same results as ref/q6_K.c
 * (dequantize bit for bit; dot: exact integer super-block sums, one float term per super-block).
 * Also the constants and the matvec activation buffer shared with q2_K.c and q3_K.c (kq236.h). */
#include "../imat/simd128/kquants.h" /* the quantizer */
#include "kq236.h"
#include "kq45.h" /* bq_kq_slot */

#define S4(v) \
  { (v), (v), (v), (v) }
#define B16(v) S4((v)*0x01010101u)

kq_const_table bq_kq236_consts = {
    .nib = B16(0x0F),
    .m30 = B16(0x30),
    .m03 = B16(0x03),
    .m04 = B16(0x04),
    .lo8 = S4(0x00FF00FF),   /* the low byte of each u16 lane */
    .w03 = S4(0x00030003),   /* the low 2 bits of each u16 lane */
    .q3mul = {64, 16, 4, 1}, /* Q3_K: lane k shifted left by 6 - 2k (q3_K.c) */
    .one16 = S4(0x00010001),
    .b32 = B16(0x20),
    .lo64 = {0x0F0F0F0F, 0x0F0F0F0F, 0, 0}, /* Q3_K: nibble mask of bytes 0-7 */
    .hi64 = {0, 0, 0x0F0F0F0F, 0x0F0F0F0F}, /* and of bytes 8-15 */
};

/* The main thread's prepared activations (a worker's are in its block, threads.c). */
static kq_act kq236_prep_main[KQ_PREP_MAX];
_Thread_local kq_act *bq_kq236_prep = kq236_prep_main;

enum {
  XS = sizeof(block_q6_K),
  XQL = offsetof(block_q6_K, ql),
  XQH = offsetof(block_q6_K, qh),
  XSC = offsetof(block_q6_K, scales),
  XD = offsetof(block_q6_K, d)
};

/* The 16 codes of sub-block j = 8h + 2g + c (bytes 0..63 of group g at chunk c of half h): low
 * nibbles from ql, high 2 bits from qh (16-bit shifts: the masks drop what crosses a byte). The
 * dequantizer takes one at a time, in ascending order; the dots take the four of (h, c) together
 * (codes), where clang merges their equal loads. */
static inline v128_t code(const kq_k *k, const uint8_t *b, int h, int g, int c) {
  const v128_t l = wasm_v128_load(b + XQL + 64 * h + 32 * (g & 1) + 16 * c);
  const v128_t hb = wasm_v128_load(b + XQH + 32 * h + 16 * c);
  const v128_t lo = g < 2 ? l : wasm_u16x8_shr(l, 4);
  const v128_t hi = g == 0   ? wasm_i16x8_shl(hb, 4)
                    : g == 1 ? wasm_i16x8_shl(hb, 2)
                    : g == 2 ? hb
                             : wasm_u16x8_shr(hb, 2);
  return wasm_v128_or(wasm_v128_and(lo, k->nib), wasm_v128_and(hi, k->m30));
}

/* The four code vectors of groups g = 0..3 at chunk c of half h. */
static inline void codes(const kq_k *k, const uint8_t *b, int h, int c, v128_t q[4]) {
  for (int g = 0; g < 4; g++) q[g] = code(k, b, h, g, c);
}

/* d * scale * 2^-24 of the 16 sub-blocks, in four vectors: each signed scale byte in the top byte
 * of an i32 lane (scale * 2^24, converted exactly) times d * 2^-48 (exact: d is 0 or at least
 * 2^-24), one rounding of the real d * scale * 2^-24, which is the reference's d * scale times
 * 2^-24 exactly (no underflow: |d * scale| is 0 or at least 2^-24). */
static inline void sub_scales(const uint8_t *b, float d, v128_t dl[4]) {
  bq_top_bytes_mul(wasm_v128_load(b + XSC), wasm_f32x4_splat(d * 0x1p-48f), dl);
}

/* The 16 values of sub-block j from its codes q and dl = d * scale * 2^-24 (sub_scales): q - 32 as
 * a signed byte, in the top byte of an i32 lane, converted (exactly (q - 32) * 2^24) and multiplied
 * by dl: the same real product as the reference's (d * scale) * (q - 32), so the same rounding. */
static inline void values(const kq_k *k, v128_t q, v128_t dl, v128_t w[4]) {
  bq_top_bytes_mul(wasm_i8x16_sub(q, k->b32), dl, w);
}

BQ_DEQUANTIZE_PROTO(q6_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const kq_k k = kq_consts();
  const uint8_t *b = x;
  const size_t nb = n / QK_K, run = BQ_TOUCH_WEIGHTS / QK_K;
  for (size_t i = 0; i < nb; i++, b += XS, y += QK_K) {
    bq_touch_run(b, i, nb, run, XS); /* simd.h */
    v128_t dl[4];
    sub_scales(b, bq_h2f_fast(bq_rd16(b + XD)), dl);
    /* each sub-block's dl read back splat by one load (bq_kq_slot: no lane shuffle) */
    for (int i = 0; i < 4; i++) wasm_v128_store(bq_kq_slot + 4 * i, dl[i]);
    const float *sl = bq_kq_slot_alias;
    /* Sub-blocks in ascending order, each from its own loads (code). Against four at a time from
     * shared loads (codes), paired rounds: 2-5% faster at 16M weights (the output stream, the
     * bound there, written in order), 3% slower at 64K (more loads and shifts). */
#pragma clang loop unroll(full)
    for (int h = 0; h < 2; h++)
#pragma clang loop unroll(full)
      for (int g = 0; g < 4; g++)
#pragma clang loop unroll(full)
        for (int c = 0; c < 2; c++) {
          const int j = 8 * h + 2 * g + c;
          v128_t w[4];
          values(&k, code(&k, b, h, g, c), wasm_v128_load32_splat(sl + j), w);
          float *o = y + 16 * j;
          for (int t = 0; t < 4; t++) {
            wasm_v128_store(o + 4 * t, w[t]);
            BQ_STORE_ORDER(); /* each 64-byte line's stores in order (simd.h) */
          }
        }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q6_K, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const kq_k k = kq_consts();
  const uint8_t *b = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / QK_K; i++, b += XS, v += QK_K) {
    v128_t dl[4],
        s[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
    sub_scales(b, bq_h2f_fast(bq_rd16(b + XD)), dl);
#pragma clang loop unroll(full)
    for (int h = 0; h < 2; h++)
#pragma clang loop unroll(full)
      for (int c = 0; c < 2; c++) {
        v128_t q[4];
        codes(&k, b, h, c, q);
        for (int g = 0; g < 4; g++) {
          const int j = 8 * h + 2 * g + c;
          v128_t w[4];
          values(&k, q[g], kq_lane(dl[j >> 2], j), w);
          for (int t = 0; t < 4; t++)
            s[t] = wasm_f32x4_add(s[t], wasm_f32x4_mul(w[t], wasm_v128_load(v + 16 * j + 4 * t)));
        }
      }
    sum = wasm_f32x4_add(sum, kq_sum4(s[0], s[1], s[2], s[3]));
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

/* The exact integer sum over the block at b of scale * (q - 32) * activation, in every lane. */
static inline v128_t isum(const kq_k *k, const uint8_t *b, const kq_act *a) {
  const v128_t sc = wasm_v128_load(b + XSC);
  v128_t r = kq_pass_order(sc), acc = wasm_i32x4_splat(0);
#pragma clang loop unroll(disable)
  for (int hc = 0; hc < 4; hc++, r = kq_next_pass(r)) {
    const int h = hc >> 1, c = hc & 1;
    v128_t q[4], p[4];
    codes(k, b, h, c, q);
    const int16_t *ah = a->q + 128 * h + 16 * c;
    for (int g = 0; g < 4; g++) p[g] = kq_dot16(k, q[g], ah + 32 * g);
    acc = wasm_i32x4_add(acc, kq_scale4(p, r, 1));
  }
  /* sum sc_j (S_j - 32 A_j), with A_j the sub-block's activation sum */
  return kq_hsum(wasm_i32x4_sub(acc, wasm_i32x4_shl(kq_act_scaled(a, sc), 5)));
}

/* The term of a super-block whose dd is huge, Inf or NaN, as ggml forms it (kq236.h). */
__attribute__((noinline)) static float big_term(const uint8_t *b, const uint8_t *yb, float dd) {
  block_q6_K a;
  memcpy(&a, b, sizeof a);
  int32_t w[QK_K];
  for (int e = 0; e < QK_K; e++) {
    const int h = e / 128, g = (e % 128) / 32, l = e % 32;
    const int lo = a.ql[64 * h + 32 * (g & 1) + l] >> (g < 2 ? 0 : 4) & 0xF;
    const int hi = a.qh[32 * h + l] >> (2 * g) & 3;
    w[e] = a.scales[e / 16] * ((lo | hi << 4) - 32);
  }
  return kq_lanes_term(w, yb, dd);
}

/* isum of the block, as KQ_D_KERNELS calls it. */
#define ISUM(k, b, yb, a) isum(k, b, a)
KQ_D_KERNELS(q6_K, term, ISUM, __simd128)
#undef ISUM

/* quantize_row_q6_K_ref byte for byte, the sub-block fits four at a time. */
BQ_KQ_SIMD_QUANTIZE(q6_K, bq_q6_K_simd)
