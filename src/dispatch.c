/* The public entry points: each forwards to the SIMD128 kernel where the build has one (kernels.inc
 * marks it SIMD and the compiler targets SIMD128), otherwise to the reference. */
#include "bq.h"

#ifdef __wasm_simd128__
#define BQ_BEST_SIMD(name) name##__simd128
#else
#define BQ_BEST_SIMD(name) name##__ref
#endif
#define BQ_BEST_REF(name) name##__ref

#define BQ_QUANTIZE(t, isa) \
  BQ_QUANTIZE_PROTO(t, ) { return BQ_BEST_##isa(bq_##t##_quantize)(x, y, n); }
#define BQ_DEQUANTIZE(t, isa) \
  BQ_DEQUANTIZE_PROTO(t, ) { return BQ_BEST_##isa(bq_##t##_dequantize)(x, y, n); }
#define BQ_DOT(t, t2, isa) \
  BQ_DOT_PROTO(t, t2, ) { return BQ_BEST_##isa(bq_##t##_dot_##t2)(x, y, n, acc); }
#define BQ_MATVEC(t, t2, isa) \
  BQ_MATVEC_PROTO(t, t2, ) { return BQ_BEST_##isa(bq_##t##_matvec_##t2)(w, rows, cols, x, y); }
#define BQ_STATS(t, isa) \
  BQ_STATS_PROTO(t, ) { return BQ_BEST_##isa(bq_##t##_stats)(x, n, rmse, max_abs, scale); }
#include "kernels.inc"

/* Every dot kernel of the build's best ISA shares one state layout; on the SIMD build all of them
 * are SIMD128 (kernels.inc marks every dot SIMD), so the state is summed the SIMD128 way. */
float bq_acc_sum(const float *acc) { return BQ_BEST_SIMD(bq_acc_sum)(acc); }
