/* The SIMD128 IQ4_NL kernels, plus the IQ4_NL . Q8_0 dot and matvec on relaxed dots. The table
 * values (-127..113) are no 7-bit operand, so the activations' signs move onto them: |a| (0..127)
 * is the 7-bit operand and v sign(a) (-113..127) the signed one. Exact while no activation code is
 * -128 (|-128| is no 7-bit value): Q8_0 quantizers give -127..127, and any block with -128 runs
 * the SIMD128 kernel. Exact integer block sums and simd128/iq4_nl.c's terms: its bits. */
#include "../simd128/iq4_nl.c"

#include "relaxed.h"

/* The table values of the 32 nibble codes of the block at p, as bq_iq4_values, by relaxed
 * swizzles: their indices are 0..15, where every implementation returns the table byte. */
static inline void rvalues(const bq_k *k, const uint8_t *p, v128_t *lo, v128_t *hi) {
  const v128_t c = wasm_v128_load(p + XQS);
  *lo = wasm_i8x16_relaxed_swizzle(BQ_IQ4NL_VALUES, wasm_v128_and(c, k->nib));
  *hi = wasm_i8x16_relaxed_swizzle(BQ_IQ4NL_VALUES, bq_hi4(k, c));
}

/* Whether any of the nb Q8_0 blocks at y has a code -128. */
static int has_min_code(const uint8_t *y, size_t nb) {
  const v128_t m = wasm_i8x16_splat(-128);
  v128_t e = wasm_i8x16_splat(0);
  for (size_t i = 0; i < nb; i++, y += YS)
    e = wasm_v128_or(e, wasm_v128_or(wasm_i8x16_eq(wasm_v128_load(y + YQS), m),
                                     wasm_i8x16_eq(wasm_v128_load(y + YQS + 16), m)));
  return wasm_v128_any_true(e);
}

/* sum v a of one block: (v ^ m) - m with m the sign mask of a is v sign(a), times |a|. */
static inline v128_t risum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  rvalues(k, a, &lo, &hi);
  const v128_t a0 = wasm_v128_load(b + YQS), a1 = wasm_v128_load(b + YQS + 16),
               z = wasm_i8x16_splat(0);
  const v128_t s0 = bq_rdot(bq_iq_signed(lo, wasm_i8x16_lt(a0, z)), wasm_i8x16_abs(a0), z);
  return bq_rdot(bq_iq_signed(hi, wasm_i8x16_lt(a1, z)), wasm_i8x16_abs(a1), s0);
}

static inline v128_t rstep4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si =
      bq_hsum4_i32(risum(k, a, b), risum(k, a + XS, b + YS), risum(k, a + 2 * XS, b + 2 * YS),
                   risum(k, a + 3 * XS, b + 3 * YS));
  return terms(k, a, si, bq_h2f_x4(k, bq_load_u16x4(b, YS)));
}

BQ_DOT_PROTO(iq4_nl, q8_0, __relaxed) {
  if (n % BQ_BLK_iq4_nl) return BQ_EINVAL;
  const size_t nb = n / BQ_BLK_iq4_nl;
  if (has_min_code(y, nb)) return bq_iq4_nl_dot_q8_0__simd128(x, y, n, acc);
  bq_dot4(x, y, nb, XS, YS, acc, rstep4);
  return BQ_OK;
}

/* One matvec call's activations, prepared once for all rows: per block |a| (32 bytes) then the
 * sign masks of a (32 bytes), c = the sum of |a| over a < 0, and d as a float (converted as
 * step4 converts it). Thread-local: in the relaxed threads build each instance prepares its own
 * (in its TLS block); in the single-threaded build they are plain static arrays. */
static _Thread_local uint8_t sp_q[(BQ_PREP_MAX_BLOCKS + 4) * 2 * BQ_B32]
    __attribute__((aligned(16)));
static _Thread_local int32_t sp_c[BQ_PREP_MAX_BLOCKS + 4] __attribute__((aligned(16)));
static _Thread_local float sp_d[BQ_PREP_MAX_BLOCKS + 4] __attribute__((aligned(16)));

/* 0 if the activations are too long or have a code -128. */
static int sprepare(const bq_k *k, const uint8_t *x, size_t nb) {
  if (nb > BQ_PREP_MAX_BLOCKS || has_min_code(x, nb)) return 0;
  const v128_t z = wasm_i8x16_splat(0), one = wasm_i8x16_splat(1);
  for (size_t i = 0; i < nb; i++, x += YS) {
    wasm_v128_store32_lane(sp_d + i, bq_h2f_x4(k, wasm_v128_and(wasm_v128_load32_zero(x), k->lo16)),
                           0);
    v128_t c = wasm_i32x4_splat(0);
    for (int h = 0; h < 2; h++) {
      const v128_t a = wasm_v128_load(x + YQS + 16 * h), m = wasm_i8x16_lt(a, z),
                   u = wasm_i8x16_abs(a);
      wasm_v128_store(sp_q + i * 2 * BQ_B32 + 16 * h, u);
      wasm_v128_store(sp_q + i * 2 * BQ_B32 + BQ_B32 + 16 * h, m);
      c = bq_rdot(wasm_v128_and(u, m), one, c);
    }
    sp_c[i] = wasm_i32x4_extract_lane(c, 0) + wasm_i32x4_extract_lane(c, 1) +
              wasm_i32x4_extract_lane(c, 2) + wasm_i32x4_extract_lane(c, 3);
  }
  for (size_t j = nb; j < ((nb + 3) & ~(size_t)3); j++) {
    sp_d[j] = 0.0f;
    sp_c[j] = 0;
    memset(sp_q + j * 2 * BQ_B32, 0, 2 * BQ_B32);
  }
  return 1;
}

/* sum v a = sum (v ^ m) |a| + c: where a < 0, v ^ m = -v - 1 and (-v - 1) |a| = v a - |a|. */
static inline v128_t rpstep4(const bq_k *k, const uint8_t *a, const void *unused, size_t i) {
  (void)unused;
  v128_t s[4];
  /* Not unrolled: V8 hoists the loads of unrolled copies and then spills. */
#pragma clang loop unroll(disable)
  for (int b = 0; b < 4; b++) {
    v128_t lo, hi;
    rvalues(k, a + XS * b, &lo, &hi);
    const uint8_t *q = sp_q + (i + b) * 2 * BQ_B32;
    s[b] = wasm_i32x4_add(wasm_i32x4_extadd_pairwise_i16x8(bq_rdot16(
                              wasm_v128_xor(lo, wasm_v128_load(q + 32)), wasm_v128_load(q))),
                          wasm_i32x4_extadd_pairwise_i16x8(bq_rdot16(
                              wasm_v128_xor(hi, wasm_v128_load(q + 48)), wasm_v128_load(q + 16))));
  }
  const v128_t si = wasm_i32x4_add(bq_hsum4_i32(s[0], s[1], s[2], s[3]), wasm_v128_load(sp_c + i));
  return terms(k, a, si, wasm_v128_load(sp_d + i));
}

BQ_MATVEC_PROTO(iq4_nl, q8_0, __relaxed) {
  if (cols % BQ_B32) return BQ_EINVAL;
  const size_t nb = cols / BQ_B32;
  const bq_k k = bq_consts();
  if (!sprepare(&k, x, nb))
    bq_matvec_dots(w, rows, nb * XS, cols, x, y, bq_iq4_nl_dot_q8_0__relaxed);
  else
    BQ_MATVEC_ROWS(w, rows, nb, XS, y, rpstep4, (const void *)0);
  return BQ_OK;
}
