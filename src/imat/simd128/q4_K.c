/* Q4_K with importance weights in SIMD128: src/imat/q4_K.c's steps, the sub-block fits four at a
 * time (kquants.h). */
#include "kquants.h"

BQ_KQ_SIMD_QUANTIZE_ROWS(q4_K, bq_q4_K_simd)
