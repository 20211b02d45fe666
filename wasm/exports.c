/* Preprocessed (cc -E -P) into the wasm export lists: every kernel of src/kernels.inc as its public
 * name, and each dot's state sum (the same names); then the type table, the block layouts, the
 * scratch-memory query and the build info. With BQ_TEST_EXPORTS (the test variant of a build,
 * build/test/), also each kernel's reference, its SIMD128 name on the SIMD builds and its relaxed
 * name on the relaxed build, which the tests call directly; the packaged modules export only the
 * public names, so the linker drops the references that have a SIMD twin. The Makefile turns the
 * names into Emscripten's EXPORTED_FUNCTIONS or wasm-ld's --export flags. */
#ifndef BQ_TEST_EXPORTS
#define BQ_NAMES_REF(name) BQ_EXPORT name
#define BQ_NAMES_SIMD BQ_NAMES_REF
#define BQ_NAMES_RELAXED BQ_NAMES_REF
#else
#define BQ_NAMES_REF(name) BQ_EXPORT name BQ_EXPORT name##__ref
#ifdef BQ_SIMD128
#define BQ_NAMES_SIMD(name) BQ_NAMES_REF(name) BQ_EXPORT name##__simd128
#else
#define BQ_NAMES_SIMD BQ_NAMES_REF
#endif
#ifdef BQ_RELAXED
#define BQ_NAMES_RELAXED(name) BQ_NAMES_SIMD(name) BQ_EXPORT name##__relaxed
#else
#define BQ_NAMES_RELAXED BQ_NAMES_SIMD
#endif
#endif
#define BQ_QUANTIZE(t, isa) BQ_NAMES_##isa(bq_##t##_quantize)
#define BQ_QUANTIZE_ROWS(t, isa) BQ_NAMES_##isa(bq_##t##_quantize_rows)
#define BQ_DEQUANTIZE(t, isa) BQ_NAMES_##isa(bq_##t##_dequantize)
#define BQ_DOT(t, t2, isa) BQ_NAMES_##isa(bq_##t##_dot_##t2) BQ_NAMES_##isa(bq_##t##_dot_##t2##_sum)
#define BQ_MATVEC(t, t2, isa) BQ_NAMES_##isa(bq_##t##_matvec_##t2)
#define BQ_STATS(t, isa) BQ_NAMES_##isa(bq_##t##_stats)
#include "../src/kernels.inc"
BQ_NAMES_SIMD(bq_acc_sum)
#ifdef BQ_RELAXED
BQ_EXPORT bq_relaxed_probe
#ifdef BQ_TEST_EXPORTS
BQ_EXPORT bq_acc_sum__relaxed
#endif
#endif
BQ_EXPORT bq_type_block_size BQ_EXPORT bq_type_size BQ_EXPORT bq_type_vec_dot
BQ_EXPORT bq_type_dot_step BQ_EXPORT bq_type_sub_block BQ_EXPORT bq_type_flags
BQ_EXPORT bq_type_name BQ_EXPORT bq_type_max_id BQ_EXPORT bq_type_field BQ_EXPORT bq_acc_lanes
BQ_EXPORT bq_scratch_base
BQ_EXPORT bq_quant_tables_bytes BQ_EXPORT bq_quant_tables_init BQ_EXPORT bq_quant_tables_ready
BQ_EXPORT bq_quant_tables_drop BQ_EXPORT bq_build_info
