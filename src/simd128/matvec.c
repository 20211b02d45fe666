/* SIMD128 matrix-vector products (rows of SIMD dots) and the SIMD128 dot-state sum. */
#include <wasm_simd128.h>

#include "../generic.h"

/* The four lanes of a SIMD dot state, summed pairwise: (a0 + a1) + (a2 + a3). */
float bq_acc_sum__simd128(const float *acc) { return (acc[0] + acc[1]) + (acc[2] + acc[3]); }

#define BQ_QUANTIZE(t, isa)
#define BQ_DEQUANTIZE(t, isa)
#define BQ_STATS(t, isa)
#define BQ_DOT(t, t2, isa)
#define BQ_MATVEC_SIMD(t, t2) BQ_DEFINE_MATVEC(t, t2, __simd128)
#define BQ_MATVEC_REF(t, t2)
#define BQ_MATVEC(t, t2, isa) BQ_MATVEC_##isa(t, t2)
#include "../kernels.inc"
