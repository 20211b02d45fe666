/* Q5_K with importance weights in SIMD128: src/imat/q5_K.c's steps, the sub-block fits four at a
 * time (kquants.h). */
#include "kquants.h"

BQ_KQ_SIMD_QUANTIZE_ROWS(q5_K, bq_q5_K_simd)
