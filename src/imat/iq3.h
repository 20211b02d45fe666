/* IQ3_XXS and IQ3_S quantizers (ggml's quantize_iq3_xxs and quantize_iq3_s): what their reference
 * (iq3.c), SIMD128 version (simd128/iq3.c) and search tables (iq3_tables.c) share. */
#ifndef BQ_IMAT_IQ3_H
#define BQ_IMAT_IQ3_H

#include "imat.h"

/* The sizes of ggml's tables (iq3_tables.c says what they hold): uint16 entries of the neighbour
 * lists of the 256 and 512 grids, and, for the SIMD search, groups of 4 neighbours over all lists
 * (a list of n takes ceil(n / 4)). The build checks them. */
#define BQ_IQ3XXS_NEIGHBOURS 22825
#define BQ_IQ3S_NEIGHBOURS 28317
#define BQ_IQ3XXS_GROUPS 6038
#define BQ_IQ3S_GROUPS 7427

#define BQ_IQ3_ALIGN64(n) (((n) + 63) / 64 * 64)
/* Bytes of ggml's three tables of grid G (grid, map, neighbour lists), padded to 64. */
#define BQ_IQ3_GGML_BYTES(G) \
  BQ_IQ3_ALIGN64(4 * (G) + 4 * 4096 + 2 * ((G) == 256 ? BQ_IQ3XXS_NEIGHBOURS : BQ_IQ3S_NEIGHBOURS))
#ifdef __wasm_simd128__
/* SIMD128 builds add a uint32 per point (its first group) and 16 floats per group. */
#define BQ_IQ3_SIMD_BYTES(G) (4 * 4096 + 64 * ((G) == 256 ? BQ_IQ3XXS_GROUPS : BQ_IQ3S_GROUPS))
#else
#define BQ_IQ3_SIMD_BYTES(G) 0
#endif
#define BQ_IQ3_TABLE_BYTES(G) (BQ_IQ3_GGML_BYTES(G) + BQ_IQ3_SIMD_BYTES(G))

/* A view of the built tables of one grid. simd (SIMD128 builds): uint32 first[4096], the first
 * group of point u's list (for points off the grid), then the groups: group g holds the grid points
 * of 4 consecutive entries of a list as float q[i][lane] = 2 * code_i + 1 (lanes past the list's
 * end NaN, so that their distance is never the smallest). */
typedef struct {
  const uint32_t *grid;
  const int32_t *map;
  const uint16_t *neighbours;
  const uint8_t *simd;
} bq_iq3_tables;

/* Fills t with the tables of grid G (256: IQ3_XXS, 512: IQ3_S) and returns 1, or returns 0 while
 * they are not built. */
int bq_iq3_tables_of(int G, bq_iq3_tables *t);

extern const bq_tables_family bq_iq3xxs_family, bq_iq3s_family;

#ifdef __wasm_simd128__
/* Writes the SIMD part of the tables of grid G after ggml's (simd128/iq3.c). */
void bq_iq3_simd_tables_build(int G, void *mem);
#endif

/* One sub-block's search, the part of quantize_row_iq3_<xxs|s>_impl between the weights and the
 * super-block's scale (iq3.c): G the grid (256 or 512), x the 32 values, w their weights. Writes
 * the sub-block's scale (>= 0; 0 when it is empty) to *scale, its 8 grid indices to gi and its sign
 * bytes to signs (4 of 7 bits for IQ3_XXS, 4 of 8 bits for IQ3_S), and returns 1 when it holds
 * values, 0 when ggml skips it as empty, or BQ_EDOMAIN where ggml aborts. */
int bq_iq3_subblock__ref(int G, const bq_iq3_tables *t, const float *x, const float *w,
                         float *scale, uint16_t *gi, uint8_t *signs);

/* The super-block steps around the sub-blocks, shared by both versions: the weights of sub-block
 * ib of a super-block (qw NULL: x^2; else qw * sqrt(sigma2 + x^2), sigma2 = 2 * sum x^2 / 256),
 * and a super-block's bytes from its sub-blocks' results. */
float bq_iq3_sigma2(const float *x);
void bq_iq3_weights(const float *x, const float *qw, float sigma2, float *w);
/* sub: per sub-block the value bq_iq3_subblock__ref returned (0 or 1), scales, gi (8 per
 * sub-block) and signs (4 per sub-block). */
void bq_iq3_finish(int G, const int *sub, const float *scales, const uint16_t *gi,
                   const uint8_t *signs, uint8_t *block);

/* A quantize_rows kernel on top of a sub-block search (the reference one or the SIMD128 one). */
typedef int bq_iq3_subblock_fn(int G, const bq_iq3_tables *t, const float *x, const float *w,
                               float *scale, uint16_t *gi, uint8_t *signs);
int bq_iq3_quantize_rows(int G, bq_iq3_subblock_fn *subblock, const float *x, void *y,
                         size_t rows, size_t cols, const float *qw);

#endif
