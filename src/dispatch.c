/* The public entry points: each forwards to the SIMD128 kernel where the build has one (kernels.inc
 * marks it SIMD and the compiler targets SIMD128), otherwise to the reference. */
#include "internal.h"

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
#define BQ_DOT(t, t2, isa)                                                         \
  BQ_DOT_PROTO(t, t2, ) { return BQ_BEST_##isa(bq_##t##_dot_##t2)(x, y, n, acc); } \
  float bq_##t##_dot_##t2##_sum(const float *acc) { return BQ_BEST_##isa(bq_acc_sum)(acc); }
#define BQ_MATVEC(t, t2, isa) \
  BQ_MATVEC_PROTO(t, t2, ) { return BQ_BEST_##isa(bq_##t##_matvec_##t2)(w, rows, cols, x, y); }
#define BQ_STATS(t, isa)                                                                     \
  BQ_STATS_PROTO(t, ) {                                                                      \
    return BQ_BEST_##isa(bq_##t##_stats)(x, n, rmse, max_abs, scale, sub_rmse, sub_max_abs); \
  }
#include "kernels.inc"

/* The state of a public dot is summed by its pair's bq_<t>_dot_<t2>_sum above, the sum of the ISA
 * that dot runs (a pair marked REF runs the reference on every build). This one is the sum of the
 * build's best ISA, for the pairs that have a kernel of that ISA. */
float bq_acc_sum(const float *acc) { return BQ_BEST_SIMD(bq_acc_sum)(acc); }
