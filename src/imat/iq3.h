/* IQ3_XXS and IQ3_S quantizers (ggml's quantize_iq3_xxs and quantize_iq3_s): what their reference
 * (iq3.c), SIMD128 version (simd128/iq3.c) and search tables (iq3_tables.c) share. */
#ifndef BQ_IMAT_IQ3_H
#define BQ_IMAT_IQ3_H

#include "imat.h"

/* The sizes of the tables (iq3_tables.c says what ggml's hold): uint16 entries of the neighbour
 * lists of the 256 and 512 grids, and, for the SIMD search, groups of 4 neighbours over all lists
 * (a list of n takes ceil(n / 4)). The build checks them; in all, IQ3_XXS's tables take 63,104
 * bytes (SIMD128 builds: 180,192), IQ3_S's 75,072 (218,480). */
#define BQ_IQ3XXS_NEIGHBOURS 22825
#define BQ_IQ3S_NEIGHBOURS 28317
#define BQ_IQ3XXS_GROUPS 6038
#define BQ_IQ3S_GROUPS 7427

#define BQ_IQ3_ALIGN64(n) (((n) + 63) / 64 * 64)
/* Bytes of ggml's three tables of grid G (grid, map, neighbour lists), padded to 64. */
#define BQ_IQ3_GGML_BYTES(G) \
  BQ_IQ3_ALIGN64(4 * (G) + 4 * 4096 + 2 * ((G) == 256 ? BQ_IQ3XXS_NEIGHBOURS : BQ_IQ3S_NEIGHBOURS))
#ifdef __wasm_simd128__
/* SIMD128 builds add 16 bytes per grid point, a uint32 per point and 16 bytes per group. */
#define BQ_IQ3_SIMD_BYTES(G) \
  (16 * (G) + 4 * 4096 + 16 * ((G) == 256 ? BQ_IQ3XXS_GROUPS : BQ_IQ3S_GROUPS))
#else
#define BQ_IQ3_SIMD_BYTES(G) 0
#endif
#define BQ_IQ3_TABLE_BYTES(G) (BQ_IQ3_GGML_BYTES(G) + BQ_IQ3_SIMD_BYTES(G))

/* A view of the built tables of one grid. simd (SIMD128 builds): float gridf[G][4], the grid
 * points' 2 * code_i + 1; uint32 first[4096], the first group of point u's list (for points off
 * the grid); then the groups: group g holds the grid points of 4 consecutive entries of a list as
 * bytes q[i][lane] = 2 * code_i + 1 (0 past the list's end). */
typedef struct {
  int size; /* G */
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
/* Writes the SIMD part of the tables of grid G after ggml's (simd128/iq3.c); BQ_OK, or BQ_EINVAL
 * if the group count is not the one above (cannot happen). */
int bq_iq3_simd_tables_build(int G, void *mem);
#endif

enum { BQ_IQ3_KMAXQ = 8 };

/* ggml's nearest_int(0.5f * (id * v - 1)) clamped to a code 0..7, a NaN's payload kept as x86-64
 * keeps it. */
static inline int bq_iq3_code(float id, float v) {
  const int l = bq_nearest_int(bq_mul(0.5f, bq_sub(bq_mul(id, v), 1.0f)));
  return l < 0 ? 0 : l > BQ_IQ3_KMAXQ - 1 ? BQ_IQ3_KMAXQ - 1 : l;
}

/* The index u of 4 codes, and the codes of grid bytes g. */
static inline int bq_iq3_point(const int8_t *L) { return L[0] | L[1] << 3 | L[2] << 6 | L[3] << 9; }
static inline void bq_iq3_codes_of(uint32_t g, int8_t *L) {
  for (int i = 0; i < 4; i++) L[i] = (int8_t)(((int)(g >> 8 * i & 0xFF) - 1) / 2);
}

/* iq3_find_best_neighbour for the off-grid point u: the grid point of u's neighbour list nearest
 * the 4 magnitudes v at scale s, by sum waux (s (2c + 1) - v)^2 (ties: the first in the list); its
 * codes into L and its index returned, or -1 when no distance is below FLT_MAX (ggml aborts). */
typedef int bq_iq3_search_fn(const bq_iq3_tables *t, int u, const float *v, const float *waux,
                             float s, int8_t *L);
int bq_iq3_search__ref(const bq_iq3_tables *t, int u, const float *v, const float *waux, float s,
                       int8_t *L);

/* The start of a sub-block's search: sqrt of the weights, the magnitudes v (IQ3_XXS: one flipped
 * back negative in a group with an odd number of negative values) and sign bytes; returns the
 * largest magnitude as ggml's MAX scan finds it. */
float bq_iq3_prepare(int G, const float *x, const float *w, float *v, float *waux, uint8_t *signs);

/* The end of a sub-block's search, from the winning trial's codes L, on-grid flags and scale: the
 * groups re-coded at that scale (IQ3_XXS: those off the grid; IQ3_S: all) and the scale refitted,
 * a negative scale flipped, the grid indices. Returns 1, or BQ_EDOMAIN where ggml aborts. */
int bq_iq3_conclude(int G, const bq_iq3_tables *t, bq_iq3_search_fn *search, const float *v,
                    const float *w, const float *waux, int8_t *L, const int *on, float scale,
                    uint8_t *signs, float *scale_out, uint16_t *gi);

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
int bq_iq3_quantize_rows(int G, bq_iq3_subblock_fn *subblock, const float *x, void *y, size_t rows,
                         size_t cols, const float *qw);

#endif
