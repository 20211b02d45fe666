/* Q3_K with importance weights in SIMD128: src/imat/q3_K.c's steps, the sub-block fits four at a
 * time (kquants.h). */
#include "kquants.h"

BQ_KQ_SIMD_QUANTIZE_ROWS(q3_K, bq_q3_K_simd)
