/* Kernels built the same way on every ISA out of that ISA's quantize, dequantize and dot kernels:
 * matrix-vector products and per-block error statistics. Each ISA's matvec.c and stats.c expand
 * these macros with its own suffix, so the SIMD build's versions call SIMD kernels. Every size
 * comes from the type table (types.inc, through internal.h). */
#ifndef BQ_GENERIC_H
#define BQ_GENERIC_H

#include "iquants.h"
#include "iquants4.h"

/* Bytes of one row of n elements of type t (n a multiple of the block size). */
#define BQ_ROW(t, n) ((n) / BQ_BLK_##t * BQ_SIZE_##t)

/* y[r] = dot(row r of w, x): each row is one call of the dot kernel from a zero state, read by the
 * pair's sum of the same ISA, so a row of matvec equals a dot of the same ISA exactly. */
#define BQ_DEFINE_MATVEC(t, t2, isa)                     \
  BQ_MATVEC_PROTO(t, t2, isa) {                          \
    if (cols % BQ_BLK_##t) return BQ_EINVAL;             \
    const size_t row_bytes = BQ_ROW(t, cols);            \
    const uint8_t *wr = (const uint8_t *)w;              \
    for (size_t r = 0; r < rows; r++, wr += row_bytes) { \
      float acc[BQ_ACC_LANES] = {0};                     \
      bq_##t##_dot_##t2##isa(wr, x, cols, acc);          \
      y[r] = bq_##t##_dot_##t2##_sum##isa(acc);          \
    }                                                    \
    return BQ_OK;                                        \
  }

/* The scale of the block of type t at p, as types.inc's scale column says: D16, the binary16
 * member d; F32, the float member d (Q8_K); NONE, NaN. One function per type, bq_block_scale_<t>.
 */
#define BQ_SCALE_NONE(t, p) ((void)(p), NAN)
#define BQ_SCALE_D16(t, p) bq_h2f(bq_rd16((const uint8_t *)(p) + BQ_OFF(t, d)))
#define BQ_SCALE_F32(t, p) bq_float(bq_rd32((const uint8_t *)(p) + BQ_OFF(t, d)))
#define BQ_TYPE(E, name, id, bs, ts, vd, step, sub, scale, imat) \
  static inline float bq_block_scale_##name(const void *p) { return BQ_SCALE_##scale(name, p); }
#include "types.inc"
#undef BQ_TYPE

/* Elements the stats kernel reports on together: a block of the type, or for the float types
 * (one-element blocks) this many elements. */
#define BQ_FLOAT_STATS_BLOCK 32
#define BQ_STATS_BLK(t) (BQ_BLK_##t > 1 ? BQ_BLK_##t : BQ_FLOAT_STATS_BLOCK)

#define BQ_STATS_CHUNK 256 /* elements quantized per round trip (on the stack) */

/* Error of m elements x against their reconstruction y: rmse = sqrt(mean (x - y)^2) and
 * max_abs = max |x - y| (NaN if any error is NaN), both in double, rounded once. */
static inline void bq_error_stats(const float *x, const float *y, size_t m, float *rmse,
                                  float *max_abs) {
  double ss = 0, mx = 0;
  /* Sequential sums leave nothing to vectorize but the differences, and clang 14 vectorizes those
   * (for the 16-element sub-blocks, once unrolled) with per-lane moves in and out of f64x2 vectors.
   */
#ifdef __clang__
#pragma clang loop vectorize(disable) unroll(disable)
#endif
  for (size_t j = 0; j < m; j++) {
    const double e = (double)x[j] - (double)y[j];
    ss += e * e;
    mx = fabs(e) > mx || e != e ? fabs(e) : mx;
  }
  *rmse = (float)sqrt(ss / (double)m);
  *max_abs = (float)mx;
}

/* Per block of BQ_STATS_BLK(t) elements: quantize, dequantize (with the kernels of suffix kisa),
 * then the block's error (bq_error_stats) and scale; for a type with sub-blocks (types.inc), the
 * error of each sub-block as well, into sub_rmse and sub_max_abs (n / sub-block entries; not
 * touched otherwise). The error arithmetic is the same scalar code on every ISA, so both builds
 * agree exactly. */
#define BQ_DEFINE_STATS(t, isa, kisa)                                                         \
  static_assert(BQ_STATS_CHUNK % BQ_STATS_BLK(t) == 0, #t ": stats chunk of whole blocks");   \
  BQ_STATS_PROTO(t, isa) {                                                                    \
    /* S: sub-block elements (1 when the type has none, and then no sub-block is reported) */ \
    enum { B = BQ_STATS_BLK(t), S = BQ_SUB_##t > 0 ? BQ_SUB_##t : 1 };                        \
    if (n % B) return BQ_EINVAL;                                                              \
    uint8_t q[BQ_ROW(t, BQ_STATS_CHUNK)];                                                     \
    float dq[BQ_STATS_CHUNK];                                                                 \
    for (size_t i = 0; i < n; i += BQ_STATS_CHUNK) {                                          \
      const size_t k = n - i < BQ_STATS_CHUNK ? n - i : BQ_STATS_CHUNK;                       \
      bq_##t##_quantize##kisa(x + i, q, k);                                                   \
      bq_##t##_dequantize##kisa(q, dq, k);                                                    \
      for (size_t b = 0; b < k / B; b++) {                                                    \
        const size_t o = i / B + b;                                                           \
        bq_error_stats(x + i + b * B, dq + b * B, B, &rmse[o], &max_abs[o]);                  \
        scale[o] = bq_block_scale_##t(q + BQ_ROW(t, b * B));                                  \
      }                                                                                       \
      for (size_t s = 0; BQ_SUB_##t > 0 && s < k / S; s++)                                    \
        bq_error_stats(x + i + s * S, dq + s * S, S, &sub_rmse[i / S + s],                    \
                       &sub_max_abs[i / S + s]);                                              \
    }                                                                                         \
    (void)sub_rmse, (void)sub_max_abs;                                                        \
    return BQ_OK;                                                                             \
  }

#endif
