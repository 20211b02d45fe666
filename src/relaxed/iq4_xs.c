/* The SIMD128 IQ4_XS kernels, plus the IQ4_XS . Q8_K dot and matvec on relaxed dots, as
 * relaxed/iq4_nl.c does them: |a| is the 7-bit operand and the table value with the sign of a the
 * signed one (relaxed swizzles of nibble indices 0..15, exact everywhere). Exact while no Q8_K
 * code is -128 (ggml's Q8_K quantizer gives -127..127: iscale = -127 / max); any call with -128
 * runs the SIMD128 kernel. Exact integer sub-block sums and simd128/iq4_xs.c's float terms: its
 * bits. */
#include "../simd128/iq4_xs.c"

#include "relaxed.h"

/* Whether any of the nb Q8_K blocks at y has a code -128. */
static int has_min_code(const uint8_t *y, size_t nb) {
  const v128_t m = wasm_i8x16_splat(-128);
  v128_t e = wasm_i8x16_splat(0);
  for (size_t i = 0; i < nb; i++, y += sizeof(block_q8_K))
    for (int j = 0; j < QK_K; j += 32)
      e = wasm_v128_or(
          e, wasm_v128_or(wasm_i8x16_eq(wasm_v128_load(y + offsetof(block_q8_K, qs) + j), m),
                          wasm_i8x16_eq(wasm_v128_load(y + offsetof(block_q8_K, qs) + j + 16), m)));
  return wasm_v128_any_true(e);
}

/* The table values of sub-block ib's 32 codes, by relaxed swizzles of indices 0..15. */
static inline void rvalues(const bq_k *k, const uint8_t *p, int ib, v128_t *lo, v128_t *hi) {
  const v128_t c = wasm_v128_load(p + XQS + 16 * ib);
  *lo = wasm_i8x16_relaxed_swizzle(BQ_IQ4NL_VALUES, wasm_v128_and(c, k->nib));
  *hi = wasm_i8x16_relaxed_swizzle(BQ_IQ4NL_VALUES, bq_hi4(k, c));
}

/* sum v a of 16 values v and codes a: ((v ^ m) - m) |a|, m the sign mask of a, as i32x4 partial
 * sums (pair sums at most 2 * 127 * 127 in magnitude: one i16 dot, widened). */
static inline v128_t rsigned16(v128_t v, const int8_t *q) {
  const v128_t a = wasm_v128_load(q);
  return wasm_i32x4_extadd_pairwise_i16x8(
      bq_rdot16(bq_iq_signed(v, wasm_i8x16_lt(a, wasm_i8x16_splat(0))), wasm_i8x16_abs(a)));
}

BQ_KQ_INLINE v128_t rterms(const bq_k *k, const bq_kq *c, const uint8_t *p, bq_kq_act act, float yd,
                           const uint8_t *bsums) {
  (void)c, (void)bsums;
  v128_t P[8];
  _Pragma("clang loop unroll(disable)") for (int ib = 0; ib < 8; ib++) {
    v128_t lo, hi;
    rvalues(k, p, ib, &lo, &hi);
    P[ib] = wasm_i32x4_add(rsigned16(lo, act.q + 32 * ib), rsigned16(hi, act.q + 32 * ib + 16));
  }
  return sub_terms(p, bq_hsum4_i32(P[0], P[1], P[2], P[3]), bq_hsum4_i32(P[4], P[5], P[6], P[7]),
                   yd);
}

BQ_DOT_PROTO(iq4_xs, q8_K, __relaxed) {
  if (n % QK_K) return BQ_EINVAL;
  if (has_min_code(y, n / QK_K)) return bq_iq4_xs_dot_q8_K__simd128(x, y, n, acc);
  bq_kq_dot(x, y, n / QK_K, XS, acc, rterms, bq_iq4_xs_dot_q8_K__ref);
  return BQ_OK;
}

/* One matvec call's activations, prepared once for all rows: per super-block |a| (256 bytes), the
 * sign masks of a (256 bytes) and c, the sums of |a| over a < 0 of its 8 sub-blocks; d. Static:
 * the module is single-threaded. */
static uint8_t sp_q[BQ_KQ_PREP_MAX * 2 * QK_K] __attribute__((aligned(16)));
static int32_t sp_c[BQ_KQ_PREP_MAX * 8] __attribute__((aligned(16)));
static float sp_d[BQ_KQ_PREP_MAX];

/* 0 if the activations are too long or have a code -128. */
static int sprepare(const uint8_t *x, size_t nb) {
  if (nb > BQ_KQ_PREP_MAX || has_min_code(x, nb)) return 0;
  const v128_t z = wasm_i8x16_splat(0), one = wasm_i8x16_splat(1);
  for (size_t i = 0; i < nb; i++, x += sizeof(block_q8_K)) {
    memcpy(sp_d + i, x + offsetof(block_q8_K, d), sizeof(float));
    uint8_t *u = sp_q + i * 2 * QK_K;
    for (int ib = 0; ib < 8; ib++) {
      v128_t s = wasm_i32x4_splat(0);
      for (int h = 0; h < 2; h++) {
        const int o = 32 * ib + 16 * h;
        const v128_t a = wasm_v128_load(x + offsetof(block_q8_K, qs) + o), m = wasm_i8x16_lt(a, z),
                     ua = wasm_i8x16_abs(a);
        wasm_v128_store(u + o, ua);
        wasm_v128_store(u + QK_K + o, m);
        s = bq_rdot(wasm_v128_and(ua, m), one, s);
      }
      sp_c[8 * i + ib] = wasm_i32x4_extract_lane(s, 0) + wasm_i32x4_extract_lane(s, 1) +
                         wasm_i32x4_extract_lane(s, 2) + wasm_i32x4_extract_lane(s, 3);
    }
  }
  return 1;
}

/* sum v a = sum (v ^ m) |a| + c: where a < 0, v ^ m = -v - 1 and (-v - 1) |a| = v a - |a|. */
static inline v128_t rpsub16(v128_t v, const uint8_t *u) {
  return wasm_i32x4_extadd_pairwise_i16x8(
      bq_rdot16(wasm_v128_xor(v, wasm_v128_load(u + QK_K)), wasm_v128_load(u)));
}

static inline v128_t rpterms(const bq_k *k, const uint8_t *p, size_t i) {
  const uint8_t *u = sp_q + i * 2 * QK_K;
  v128_t P[8];
  _Pragma("clang loop unroll(disable)") for (int ib = 0; ib < 8; ib++) {
    v128_t lo, hi;
    rvalues(k, p, ib, &lo, &hi);
    P[ib] = wasm_i32x4_add(rpsub16(lo, u + 32 * ib), rpsub16(hi, u + 32 * ib + 16));
  }
  const v128_t s0 = wasm_i32x4_add(bq_hsum4_i32(P[0], P[1], P[2], P[3]),
                                   wasm_v128_load(sp_c + 8 * i)),
               s1 = wasm_i32x4_add(bq_hsum4_i32(P[4], P[5], P[6], P[7]),
                                   wasm_v128_load(sp_c + 8 * i + 4));
  return sub_terms(p, s0, s1, sp_d[i]);
}

/* Each row from the same terms as its relaxed dot (bq_kq_matvec's loop on these activations). */
BQ_MATVEC_PROTO(iq4_xs, q8_K, __relaxed) {
  if (cols % QK_K) return BQ_EINVAL;
  const size_t nb = cols / QK_K;
  if (!sprepare(x, nb)) {
    for (size_t r = 0; r < rows; r++) {
      float acc[BQ_ACC_LANES] = {0};
      bq_iq4_xs_dot_q8_K__relaxed(w + r * nb * XS, x, cols, acc);
      y[r] = bq_acc_sum__simd128(acc);
    }
    return BQ_OK;
  }
  const bq_k k = bq_consts();
  for (size_t r = 0; r < rows; r++) {
    v128_t sum = wasm_f32x4_splat(0.0f);
    for (size_t i = 0; i < nb; i++, w += XS) sum = wasm_f32x4_add(sum, rpterms(&k, w, i));
    y[r] = bq_kq_finite(sum) ? bq_kq_row_sum(sum)
                             : bq_kq_row_dot(w - nb * XS, x, cols, bq_iq4_xs_dot_q8_K__relaxed);
  }
  return BQ_OK;
}
