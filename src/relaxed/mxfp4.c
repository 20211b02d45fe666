/* The SIMD128 MXFP4 kernels, plus the MXFP4 . Q8_0 dot and matvec on relaxed dots: the E2M1 values
 * (-12..12 in halves of the scale) plus 12 (0..24) are the 7-bit operand, looked up from a shifted
 * table, and the offset is folded through the activation sums. Exact integer block sums and
 * simd128/mxfp4.c's terms: the SIMD128 kernels' bits. */
#include "../simd128/mxfp4.c"

#include "relaxed.h"

/* BQ_MXFP4_VALUES plus 12. */
#define RVALUES wasm_i8x16_const(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0)

/* sum (v + 12) a - 12 sum a of one block, in i16 before the widening: product lanes at most
 * 4 * 24 * 128 = 12288 in magnitude, the activation sums' 12 * 4 * 128 = 6144. */
static inline v128_t risum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  v128_t lo, hi;
  bq_iq4_values(k, RVALUES, wasm_v128_load(a + XQS), &lo, &hi);
  const v128_t a0 = wasm_v128_load(b + YQS), a1 = wasm_v128_load(b + YQS + 16),
               one = wasm_i8x16_splat(1);
  const v128_t s = wasm_i16x8_add(bq_rdot16(a0, one), bq_rdot16(a1, one));
  const v128_t p = wasm_i16x8_add(bq_rdot16(a0, lo), bq_rdot16(a1, hi));
  return wasm_i32x4_extadd_pairwise_i16x8(
      wasm_i16x8_sub(p, wasm_i16x8_mul(s, wasm_i16x8_splat(12))));
}

static inline v128_t rstep4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si =
      bq_hsum4_i32(risum(k, a, b), risum(k, a + XS, b + YS), risum(k, a + 2 * XS, b + 2 * YS),
                   risum(k, a + 3 * XS, b + 3 * YS));
  return terms(a, si, bq_h2f_x4(k, bq_load_u16x4(b, YS)));
}

BQ_DOT_PROTO(mxfp4, q8_0, __relaxed) {
  if (n % BQ_BLK_mxfp4) return BQ_EINVAL;
  bq_dot4(x, y, n / BQ_BLK_mxfp4, XS, YS, acc, rstep4);
  return BQ_OK;
}

static inline v128_t rpstep4(const bq_k *k, const uint8_t *a, const bq_rprep *p, size_t i) {
  v128_t s[4];
  for (int b = 0; b < 4; b++) {
    v128_t lo, hi;
    bq_iq4_values(k, RVALUES, wasm_v128_load(a + XS * b + XQS), &lo, &hi);
    s[b] = bq_rdot_u5x32(lo, hi, p->q + (i + b) * BQ_B32);
  }
  /* sum v a = sum (v + 12) a - 12 sum a, exactly */
  const v128_t si =
      wasm_i32x4_sub(bq_hsum4_i32(s[0], s[1], s[2], s[3]),
                     wasm_i32x4_mul(wasm_v128_load(p->sum + i), wasm_i32x4_splat(12)));
  return terms(a, si, wasm_v128_load(p->d + i));
}

BQ_MATVEC_PROTO(mxfp4, q8_0, __relaxed) {
  return bq_rmatvec(w, rows, cols, x, y, XS, YS, YQS, rpstep4, bq_mxfp4_dot_q8_0__relaxed);
}
