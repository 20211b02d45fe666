/* The public entry points: each forwards to the SIMD128 kernel where the build has one (kernels.inc
 * marks it SIMD and the compiler targets SIMD128), otherwise to the reference. And each dot pair's
 * result of a state, per ISA. */
#include "internal.h"

#ifdef __wasm_simd128__
#define BQ_BEST_SIMD(name) name##__simd128
#else
#define BQ_BEST_SIMD(name) name##__ref
#endif
#define BQ_BEST_REF(name) name##__ref
#ifdef __wasm_relaxed_simd__
#define BQ_BEST_RELAXED(name) name##__relaxed
#else
#define BQ_BEST_RELAXED BQ_BEST_SIMD
#endif

/* A dot state's result, bq_<t>_dot_<t2>_sum__<isa>, is the lane sum of the ISA, bq_acc_sum__<isa>,
 * except for the pairs and ISAs marked here: ggml's dot ends with a scale of its running sum
 * (0.125f * sumf, 0.25f * sumf), or keeps it in double (F32), so their kernel files define the
 * sum themselves. A marker is
 * BQ_OWN_SUM_<t>_<t2><isa>, defined as "~," (an extra macro argument, which BQ_IF_OWN_SUM tests).
 */
#define BQ_OWN_SUM_f32_f32__ref ~, /* a double in the state (src/ref/f32.c) */
#define BQ_OWN_SUM_iq2_xxs_q8_K__ref ~,
#define BQ_OWN_SUM_iq2_xs_q8_K__ref ~,
#define BQ_OWN_SUM_iq2_s_q8_K__ref ~,
#define BQ_OWN_SUM_iq3_xxs_q8_K__ref ~,
#define BQ_OWN_SUM_iq2_xxs_q8_K__simd128 ~, /* src/simd128/iqdot.h: the reference's result */
#define BQ_OWN_SUM_iq2_xs_q8_K__simd128 ~,
#define BQ_OWN_SUM_iq2_s_q8_K__simd128 ~,
#define BQ_OWN_SUM_iq3_xxs_q8_K__simd128 ~,
#define BQ_OWN_SUM_iq3_s_q8_K__simd128 ~,

#define BQ_ARG3(a, b, c, ...) c
#define BQ_ARG3_(...) BQ_ARG3(__VA_ARGS__)
/* own when BQ_OWN_SUM_<t>_<t2><isa> is defined, otherwise dflt. */
#define BQ_IF_OWN_SUM(t, t2, isa, own, dflt) BQ_ARG3_(BQ_OWN_SUM_##t##_##t2##isa, own, dflt, ~)
#define BQ_SUM_OWN(t, t2, isa)
#define BQ_SUM_LANES(t, t2, isa) \
  BQ_DOT_SUM_PROTO(t, t2, isa) { return bq_acc_sum##isa(acc); }
#define BQ_DEFINE_SUM(t, t2, isa) BQ_IF_OWN_SUM(t, t2, isa, BQ_SUM_OWN, BQ_SUM_LANES)(t, t2, isa)
#define BQ_SUMS_REF(t, t2) BQ_DEFINE_SUM(t, t2, __ref)
#ifdef __wasm_simd128__
#define BQ_SUMS_SIMD(t, t2) BQ_SUMS_REF(t, t2) BQ_DEFINE_SUM(t, t2, __simd128)
#else
#define BQ_SUMS_SIMD BQ_SUMS_REF
#endif
#ifdef __wasm_relaxed_simd__
#define BQ_SUMS_RELAXED(t, t2) BQ_SUMS_SIMD(t, t2) BQ_DEFINE_SUM(t, t2, __relaxed)
#else
#define BQ_SUMS_RELAXED BQ_SUMS_SIMD
#endif

#define BQ_QUANTIZE(t, isa) \
  BQ_QUANTIZE_PROTO(t, ) { return BQ_BEST_##isa(bq_##t##_quantize)(x, y, n); }
#define BQ_QUANTIZE_ROWS(t, isa)                                        \
  BQ_QUANTIZE_ROWS_PROTO(t, ) {                                         \
    return BQ_BEST_##isa(bq_##t##_quantize_rows)(x, y, rows, cols, qw); \
  }
#define BQ_DEQUANTIZE(t, isa) \
  BQ_DEQUANTIZE_PROTO(t, ) { return BQ_BEST_##isa(bq_##t##_dequantize)(x, y, n); }
#define BQ_DOT(t, t2, isa)                                                          \
  BQ_DOT_PROTO(t, t2, ) { return BQ_BEST_##isa(bq_##t##_dot_##t2)(x, y, n, acc); }  \
  BQ_DOT_SUM_PROTO(t, t2, ) { return BQ_BEST_##isa(bq_##t##_dot_##t2##_sum)(acc); } \
  BQ_SUMS_##isa(t, t2)
#define BQ_MATVEC(t, t2, isa) \
  BQ_MATVEC_PROTO(t, t2, ) { return BQ_BEST_##isa(bq_##t##_matvec_##t2)(w, rows, cols, x, y); }
#define BQ_STATS(t, isa)                                                                     \
  BQ_STATS_PROTO(t, ) {                                                                      \
    return BQ_BEST_##isa(bq_##t##_stats)(x, n, rmse, max_abs, scale, sub_rmse, sub_max_abs); \
  }
#include "kernels.inc"

/* The build's best lane sum, for the pairs that have a kernel of that ISA. */
float bq_acc_sum(const float *acc) { return BQ_BEST_SIMD(bq_acc_sum)(acc); }
