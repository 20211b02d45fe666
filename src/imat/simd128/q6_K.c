/* Q6_K with importance weights in SIMD128: src/imat/q6_K.c's steps, the sub-block fits four at a
 * time (kquants.h). */
#include "kquants.h"

BQ_KQ_SIMD_QUANTIZE_ROWS(q6_K, bq_q6_K_simd)
