/* Q2_K with importance weights in SIMD128: src/imat/q2_K.c's steps, the sub-block fits four at a
 * time (kquants.h). */
#include "kquants.h"

BQ_KQ_SIMD_QUANTIZE_ROWS(q2_K, bq_q2_K_simd)
