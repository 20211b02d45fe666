/* blockquant: ggml block-quantization codecs.
 *
 * Every kernel works on caller-owned memory and allocates nothing. Element counts (n, cols) must be
 * multiples of the type's block size (32 for the quantized types); a kernel returns BQ_OK or
 * BQ_EINVAL and writes nothing when they are not. Kernels are listed once, in kernels.inc: each
 * exists as bq_<name>__ref (plain C, the oracle), possibly bq_<name>__simd128, and the public
 * bq_<name>, which picks the fastest one the build has.
 *
 * Dot products accumulate into a caller-owned state of BQ_ACC_LANES floats (zero it first; read the
 * result with the pair's bq_<t>_dot_<t2>_sum, or bq_<t>_dot_<t2>_sum__<isa> for a kernel of one
 * ISA), so a long vector can be fed in pieces: the result does not depend on where the pieces are
 * cut as long as every cut falls on a multiple of the type's dot step (bq_type_dot_step, in
 * elements). */
#ifndef BQ_H
#define BQ_H

#include <stddef.h>
#include <stdint.h>

#define BQ_OK 0
#define BQ_EINVAL (-1)
/* A grid type's quantizer called before its search tables were built (bq_quant_tables_init). */
#define BQ_ENOTABLES (-2)
/* Values a grid type's quantizer cannot quantize as ggml does, because ggml aborts on them: its
 * search asserts that it found a grid point and that a scale is not NaN, which NaN, Inf or
 * overflowing values (or weights) can break. No GGUF file holds bytes for such input; the output
 * is left unspecified. */
#define BQ_EDOMAIN (-3)

/* Floats of dot state: the SIMD128 dots keep 4 lane sums in acc[0..3]; a reference dot keeps its
 * running sum in acc[0] and, where ggml's generic dot carries more float state across blocks (the
 * K-quants' sums[8]), that state in acc[1..]; F32 . F32's reference keeps ggml's double sum in the
 * first 8 bytes. Unused lanes stay zero. */
#define BQ_ACC_LANES 16

/* ggml type ids (src/types.inc). */
enum bq_type {
#define BQ_TYPE(E, name, id, bs, ts, vd, step, sub, scale, imat) BQ_TYPE_##E = id,
#include "types.inc"
#undef BQ_TYPE
};

/* What blockquant can do with a type (bq_type_flags), derived from kernels.inc. */
#define BQ_F_QUANTIZE 1
#define BQ_F_DEQUANTIZE 2
#define BQ_F_DOT 4     /* dot with its vec_dot type (bq_type_vec_dot) */
#define BQ_F_DOT_F32 8 /* dot with f32 values */
#define BQ_F_MATVEC 16 /* matvec against its vec_dot type or f32 */
#define BQ_F_STATS 32
#define BQ_F_QUANTIZE_ROWS 64     /* quantize whole rows with importance weights (quantize_rows) */
#define BQ_F_REQUIRES_IMATRIX 128 /* ggml quantizes it only with importance weights */

/* The type table: for a known id, block size in elements and block size in bytes; 0 for an
 * unknown or retired id. bq_type_vec_dot: the id ggml pairs it with in dots, or -1.
 * bq_type_dot_step: elements at which a dot may be cut (0: no dot). bq_type_sub_block: elements
 * per sub-block reported by stats (0: none). bq_type_name returns a static NUL-terminated name or
 * NULL. */
int bq_type_block_size(int type);
int bq_type_size(int type);
int bq_type_vec_dot(int type);
int bq_type_dot_step(int type);
int bq_type_sub_block(int type);
int bq_type_flags(int type);
const char *bq_type_name(int type);
int bq_type_max_id(void);
int bq_acc_lanes(void);

/* The block layout, field by field in memory order, as the C structs have it: field i of a type's
 * block (name, static), with out[0] = byte offset, out[1] = bytes, out[2] = bytes per scalar
 * (what a byte-order swap reverses: 2 for a half, 4 for a 32-bit word, 1 for codes); NULL past
 * the last field or for a type without a block struct. */
const char *bq_type_field(int type, int i, int *out);
/* The kind of field i of a type's block, as fields.inc names it ("F16", "U8", "I8", "U16", "U32",
 * "F32", "I16"), or NULL. */
const char *bq_type_field_kind(int type, int i);

#define BQ_QUANTIZE_PROTO(t, isa) int bq_##t##_quantize##isa(const float *x, void *y, size_t n)
#define BQ_QUANTIZE_ROWS_PROTO(t, isa)                                               \
  int bq_##t##_quantize_rows##isa(const float *x, void *y, size_t rows, size_t cols, \
                                  const float *qw)
#define BQ_DEQUANTIZE_PROTO(t, isa) int bq_##t##_dequantize##isa(const void *x, float *y, size_t n)
#define BQ_DOT_PROTO(t, t2, isa) \
  int bq_##t##_dot_##t2##isa(const void *x, const void *y, size_t n, float *acc)
/* The result of a dot state of pair t.t2 (see kernels.inc and dispatch.c). */
#define BQ_DOT_SUM_PROTO(t, t2, isa) float bq_##t##_dot_##t2##_sum##isa(const float *acc)
#define BQ_MATVEC_PROTO(t, t2, isa) \
  int bq_##t##_matvec_##t2##isa(const void *w, size_t rows, size_t cols, const void *x, float *y)
#define BQ_STATS_PROTO(t, isa)                                                                 \
  int bq_##t##_stats##isa(const float *x, size_t n, float *rmse, float *max_abs, float *scale, \
                          float *sub_rmse, float *sub_max_abs)

/* Prototypes: the public name, the reference, and the SIMD128 kernel where one exists. */
#define BQ_PROTOS_REF(P, ...) \
  P(__VA_ARGS__, );           \
  P(__VA_ARGS__, __ref);
#ifdef __wasm_simd128__
#define BQ_PROTOS_SIMD(P, ...) BQ_PROTOS_REF(P, __VA_ARGS__) P(__VA_ARGS__, __simd128);
#else
#define BQ_PROTOS_SIMD BQ_PROTOS_REF
#endif
#ifdef __wasm_relaxed_simd__
#define BQ_PROTOS_RELAXED(P, ...) BQ_PROTOS_SIMD(P, __VA_ARGS__) P(__VA_ARGS__, __relaxed);
#else
#define BQ_PROTOS_RELAXED BQ_PROTOS_SIMD
#endif
#define BQ_QUANTIZE(t, isa) BQ_PROTOS_##isa(BQ_QUANTIZE_PROTO, t)
#define BQ_QUANTIZE_ROWS(t, isa) BQ_PROTOS_##isa(BQ_QUANTIZE_ROWS_PROTO, t)
#define BQ_DEQUANTIZE(t, isa) BQ_PROTOS_##isa(BQ_DEQUANTIZE_PROTO, t)
#define BQ_DOT(t, t2, isa) \
  BQ_PROTOS_##isa(BQ_DOT_PROTO, t, t2) BQ_PROTOS_##isa(BQ_DOT_SUM_PROTO, t, t2)
#define BQ_MATVEC(t, t2, isa) BQ_PROTOS_##isa(BQ_MATVEC_PROTO, t, t2)
#define BQ_STATS(t, isa) BQ_PROTOS_##isa(BQ_STATS_PROTO, t)
#include "kernels.inc"
#undef BQ_QUANTIZE
#undef BQ_QUANTIZE_ROWS
#undef BQ_DEQUANTIZE
#undef BQ_DOT
#undef BQ_MATVEC
#undef BQ_STATS

/* Sum of a dot-product state, in the fixed order its ISA's kernels assume: the result of most
 * pairs. Read a dot's result with its pair's bq_<t>_dot_<t2>_sum[__<isa>] above, which is this
 * sum except where ggml's dot scales it at the end (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS with Q8_K) or
 * sums in double (F32 . F32's reference). */
float bq_acc_sum(const float *acc);
float bq_acc_sum__ref(const float *acc);
#ifdef __wasm_simd128__
float bq_acc_sum__simd128(const float *acc);
#endif
#ifdef __wasm_relaxed_simd__
float bq_acc_sum__relaxed(const float *acc);
#endif

/* The search tables of the grid types' quantizers (ggml's iq2xs_init_impl and iq3xs_init_impl:
 * the grid points, the map from a point to its grid index, and each point's nearest grid points),
 * built into caller-owned memory, since no kernel allocates. bq_quant_tables_bytes: the bytes
 * type's tables take (0 when its quantizer needs none); bq_quant_tables_init builds them into mem
 * (that many bytes, 64-byte aligned, owned by the caller until bq_quant_tables_drop) and makes
 * them the tables of type and of every type that shares them (IQ1_S and IQ1_M); it returns BQ_OK
 * or BQ_EINVAL. bq_quant_tables_ready: 1 when type's tables are in place, or it needs none.
 * bq_quant_tables_drop: forgets them (the memory is the caller's again). A quantize_rows kernel of
 * a grid type returns BQ_ENOTABLES while its tables are not in place. */
size_t bq_quant_tables_bytes(int type);
int bq_quant_tables_init(int type, void *mem);
int bq_quant_tables_ready(int type);
void bq_quant_tables_drop(int type);

/* fp16 and bf16 scalar conversions exactly as ggml's reference does them. */
uint16_t bq_fp32_to_fp16(float f);
float bq_fp16_to_fp32(uint16_t h);
uint16_t bq_fp32_to_bf16(float f);
float bq_bf16_to_fp32(uint16_t h);

#endif
