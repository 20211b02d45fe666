/* Kernels built the same way on every ISA out of that ISA's quantize, dequantize and dot kernels:
 * matrix-vector products and per-block error statistics. Each ISA's matvec.c and stats.c expand
 * these macros with its own suffix, so the SIMD build's versions call SIMD kernels. */
#ifndef BQ_GENERIC_H
#define BQ_GENERIC_H

#include "internal.h"

/* Bytes of one row of n elements of each type (n a multiple of the block size). */
#define BQ_ROW_f32(n) ((n)*4)
#define BQ_ROW_f16(n) ((n)*2)
#define BQ_ROW_bf16(n) ((n)*2)
#define BQ_ROW_q4_0(n) ((n) / QK * 18)
#define BQ_ROW_q4_1(n) ((n) / QK * 20)
#define BQ_ROW_q5_0(n) ((n) / QK * 22)
#define BQ_ROW_q5_1(n) ((n) / QK * 24)
#define BQ_ROW_q8_0(n) ((n) / QK * 34)
#define BQ_ROW_q8_1(n) ((n) / QK * 36)

/* Elements per block (the float types take any length). */
#define BQ_BLK_f32 1
#define BQ_BLK_f16 1
#define BQ_BLK_bf16 1
#define BQ_BLK_q4_0 QK
#define BQ_BLK_q4_1 QK
#define BQ_BLK_q5_0 QK
#define BQ_BLK_q5_1 QK
#define BQ_BLK_q8_0 QK
#define BQ_BLK_q8_1 QK

/* y[r] = dot(row r of w, x): each row is one call of the dot kernel from a zero state, so a row of
 * matvec equals a dot of the same ISA exactly. */
#define BQ_DEFINE_MATVEC(t, t2, isa)                     \
  BQ_MATVEC_PROTO(t, t2, isa) {                          \
    if (cols % BQ_BLK_##t) return BQ_EINVAL;             \
    const size_t row_bytes = BQ_ROW_##t(cols);           \
    const uint8_t *wr = (const uint8_t *)w;              \
    for (size_t r = 0; r < rows; r++, wr += row_bytes) { \
      float acc[BQ_ACC_LANES] = {0};                     \
      bq_##t##_dot_##t2##isa(wr, x, cols, acc);          \
      y[r] = bq_acc_sum##isa(acc);                       \
    }                                                    \
    return BQ_OK;                                        \
  }

/* Scale of the block at p: d as a float, or NaN for the float types, which have none. */
#define BQ_SCALE_f16(p) NAN
#define BQ_SCALE_bf16(p) NAN
#define BQ_SCALE_q(p) bq_h2f(bq_rd16(p))
#define BQ_SCALE_q4_0 BQ_SCALE_q
#define BQ_SCALE_q4_1 BQ_SCALE_q
#define BQ_SCALE_q5_0 BQ_SCALE_q
#define BQ_SCALE_q5_1 BQ_SCALE_q
#define BQ_SCALE_q8_0 BQ_SCALE_q
#define BQ_SCALE_q8_1 BQ_SCALE_q

#define BQ_STATS_CHUNK 256 /* elements quantized per round trip (8 blocks, on the stack) */

/* Per 32-element block: quantize, dequantize (with the kernels of suffix kisa), then rmse =
 * sqrt(mean (x - x')^2) and max_abs = max |x - x'|, both computed in double from the float values
 * and rounded once; the error arithmetic is the same scalar code on every ISA, so both builds agree
 * exactly. */
#define BQ_DEFINE_STATS(t, isa, kisa)                                          \
  BQ_STATS_PROTO(t, isa) {                                                     \
    if (n % QK) return BQ_EINVAL;                                              \
    uint8_t q[BQ_ROW_##t(BQ_STATS_CHUNK)];                                     \
    float dq[BQ_STATS_CHUNK];                                                  \
    for (size_t i = 0; i < n; i += BQ_STATS_CHUNK) {                           \
      const size_t k = n - i < BQ_STATS_CHUNK ? n - i : BQ_STATS_CHUNK;        \
      bq_##t##_quantize##kisa(x + i, q, k);                                    \
      bq_##t##_dequantize##kisa(q, dq, k);                                     \
      for (size_t b = 0; b < k / QK; b++) {                                    \
        double ss = 0, mx = 0;                                                 \
        for (size_t j = 0; j < QK; j++) {                                      \
          const double e = (double)x[i + b * QK + j] - (double)dq[b * QK + j]; \
          ss += e * e;                                                         \
          mx = fabs(e) > mx || e != e ? fabs(e) : mx;                          \
        }                                                                      \
        const size_t o = (i / QK) + b;                                         \
        rmse[o] = (float)sqrt(ss / QK);                                        \
        max_abs[o] = (float)mx;                                                \
        scale[o] = BQ_SCALE_##t(q + BQ_ROW_##t(b * QK));                       \
        (void)q;                                                               \
      }                                                                        \
    }                                                                          \
    return BQ_OK;                                                              \
  }

#endif
