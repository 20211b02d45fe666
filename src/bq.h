/* blockquant: ggml block-quantization codecs.
 *
 * Every kernel works on caller-owned memory and allocates nothing. Element counts (n, cols) must be
 * multiples of the type's block size (32 for the quantized types); a kernel returns BQ_OK or
 * BQ_EINVAL and writes nothing when they are not. Kernels are listed once, in kernels.inc: each
 * exists as bq_<name>__ref (plain C, the oracle), possibly bq_<name>__simd128, and the public
 * bq_<name>, which picks the fastest one the build has.
 *
 * Dot products accumulate into a caller-owned state of BQ_ACC_LANES floats (zero it first; read the
 * result with bq_acc_sum of the same ISA), so a long vector can be fed in pieces: the result does
 * not depend on where the pieces are cut as long as every cut falls on a multiple of BQ_DOT_STEP
 * blocks. */
#ifndef BQ_H
#define BQ_H

#include <stddef.h>
#include <stdint.h>

#define BQ_OK 0
#define BQ_EINVAL (-1)

#define BQ_ACC_LANES 4
#define BQ_DOT_STEP 4

/* ggml type ids (src/types.inc). */
enum bq_type {
#define BQ_TYPE(E, name, id, bs, ts, vd, flags) BQ_TYPE_##E = id,
#include "types.inc"
#undef BQ_TYPE
};

#define BQ_F_CODEC 1 /* quantize, dequantize, dot and matvec are implemented */

/* The type table: for a known id, block size in elements and block size in bytes; 0 for an
 * unknown or retired id. bq_type_name returns a static NUL-terminated name or NULL. */
int bq_type_block_size(int type);
int bq_type_size(int type);
int bq_type_vec_dot(int type);
int bq_type_flags(int type);
const char *bq_type_name(int type);
int bq_type_max_id(void);

#define BQ_QUANTIZE_PROTO(t, isa) int bq_##t##_quantize##isa(const float *x, void *y, size_t n)
#define BQ_DEQUANTIZE_PROTO(t, isa) int bq_##t##_dequantize##isa(const void *x, float *y, size_t n)
#define BQ_DOT_PROTO(t, t2, isa) \
  int bq_##t##_dot_##t2##isa(const void *x, const void *y, size_t n, float *acc)
#define BQ_MATVEC_PROTO(t, t2, isa) \
  int bq_##t##_matvec_##t2##isa(const void *w, size_t rows, size_t cols, const void *x, float *y)
#define BQ_STATS_PROTO(t, isa) \
  int bq_##t##_stats##isa(const float *x, size_t n, float *rmse, float *max_abs, float *scale)

/* Prototypes: the public name, the reference, and the SIMD128 kernel where one exists. */
#define BQ_PROTOS_REF(P, ...) \
  P(__VA_ARGS__, );           \
  P(__VA_ARGS__, __ref);
#ifdef __wasm_simd128__
#define BQ_PROTOS_SIMD(P, ...) BQ_PROTOS_REF(P, __VA_ARGS__) P(__VA_ARGS__, __simd128);
#else
#define BQ_PROTOS_SIMD BQ_PROTOS_REF
#endif
#define BQ_QUANTIZE(t, isa) BQ_PROTOS_##isa(BQ_QUANTIZE_PROTO, t)
#define BQ_DEQUANTIZE(t, isa) BQ_PROTOS_##isa(BQ_DEQUANTIZE_PROTO, t)
#define BQ_DOT(t, t2, isa) BQ_PROTOS_##isa(BQ_DOT_PROTO, t, t2)
#define BQ_MATVEC(t, t2, isa) BQ_PROTOS_##isa(BQ_MATVEC_PROTO, t, t2)
#define BQ_STATS(t, isa) BQ_PROTOS_##isa(BQ_STATS_PROTO, t)
#include "kernels.inc"
#undef BQ_QUANTIZE
#undef BQ_DEQUANTIZE
#undef BQ_DOT
#undef BQ_MATVEC
#undef BQ_STATS

/* Sum of a dot-product state, in the fixed order its ISA's kernels assume. */
float bq_acc_sum(const float *acc);
float bq_acc_sum__ref(const float *acc);
#ifdef __wasm_simd128__
float bq_acc_sum__simd128(const float *acc);
#endif

/* fp16 and bf16 scalar conversions exactly as ggml's reference does them. */
uint16_t bq_fp32_to_fp16(float f);
float bq_fp16_to_fp32(uint16_t h);
uint16_t bq_fp32_to_bf16(float f);
float bq_bf16_to_fp32(uint16_t h);

#endif
