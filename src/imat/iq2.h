/* The search tables of the 8-element grid quantizers, IQ2_XXS, IQ2_XS, IQ2_S (iq2.c) and IQ1_S,
 * IQ1_M (iq1*.c), built by iq2_tables.c; and what the IQ2 reference (iq2.c) and SIMD128 version
 * (simd128/iq2.c) share. */
#ifndef BQ_IMAT_IQ2_H
#define BQ_IMAT_IQ2_H

#include "imat.h"

/* A point of the search is 8 codes 0..3, indexed u = c0 | c1 << 2 | ... | c7 << 14. The grids
 * only hold codes 0..2, so the map covers u up to 2 * 0x5555 + 1 (ggml's kmap_size, 43692). */
enum { BQ_IQ2_MAP = 43692 };

/* The uint16 entries of the neighbour lists of the 256, 512, 1024 and 2048 grids (iq2_tables.c
 * says what they hold); the build checks them. In all, the tables take 1,011,648 bytes (IQ2_XXS),
 * 1,282,368 (IQ2_XS), 601,216 (IQ2_S) and 2,941,888 (IQ1_S and IQ1_M). */
#define BQ_IQ2XXS_NEIGHBOURS 417400
#define BQ_IQ2XS_NEIGHBOURS 551722
#define BQ_IQ2S_NEIGHBOURS 209100
#define BQ_IQ1S_NEIGHBOURS 1375339

#define BQ_IQ2_NEIGHBOURS(G)            \
  ((G) == 256    ? BQ_IQ2XXS_NEIGHBOURS \
   : (G) == 512  ? BQ_IQ2XS_NEIGHBOURS  \
   : (G) == 1024 ? BQ_IQ2S_NEIGHBOURS   \
                 : BQ_IQ1S_NEIGHBOURS)
#define BQ_IQ2_ALIGN64(n) (((n) + 63) / 64 * 64)
/* Bytes of ggml's three tables of grid G (grid, map, neighbour lists), padded to 64. */
#define BQ_IQ2_TABLE_BYTES(G) BQ_IQ2_ALIGN64(8 * (G) + 4 * BQ_IQ2_MAP + 2 * BQ_IQ2_NEIGHBOURS(G))

/* A view of the built tables of one grid, ggml's iq2_data entry: grid[k], point k's byte i =
 * 2 * c_i + 1; map[u], u's grid index or, off the grid, -(o + 1) with o the offset in neighbours
 * of u's list (a count n, then n grid indices). */
typedef struct {
  int size; /* G */
  const uint64_t *grid;
  const int32_t *map;
  const uint16_t *neighbours;
} bq_iq2_tables;

/* Fills t with the tables of grid G (256: IQ2_XXS, 512: IQ2_XS, 1024: IQ2_S, 2048: IQ1_S and
 * IQ1_M) and returns 1, or returns 0 while they are not built (or for another G). */
int bq_iq2_tables_of(int G, bq_iq2_tables *t);

extern const bq_tables_family bq_iq2xxs_family, bq_iq2xs_family, bq_iq2s_family, bq_iq1s_family;

/* ---- The IQ2 quantizers (iq2.c): G = 256 (IQ2_XXS, sub-blocks of 32 = 4 groups of 8), 512
 * (IQ2_XS) or 1024 (IQ2_S), both sub-blocks of 16 = 2 groups. ---- */

/* iq2_find_best_neighbour for the off-grid point u: the grid point of u's neighbour list nearest
 * the 8 magnitudes v at scale s, by sum waux (s (2c + 1) - v)^2 (ties: the first in the list); its
 * codes into L and its index returned, or -1 when no distance is below FLT_MAX (ggml aborts). */
typedef int bq_iq2_search_fn(const bq_iq2_tables *t, int u, const float *v, const float *waux,
                             float s, int8_t *L);
int bq_iq2_search__ref(const bq_iq2_tables *t, int u, const float *v, const float *waux, float s,
                       int8_t *L);

/* The start of a sub-block's search: sqrt of the weights, the magnitudes v (IQ2_XXS, IQ2_XS: one
 * flipped back negative in a group with an odd number of negative values) and sign bytes (7 bits
 * for those two, 8 for IQ2_S); returns the largest magnitude as ggml's MAX scan finds it. */
float bq_iq2_prepare(int G, const float *x, const float *w, float *v, float *waux, uint8_t *signs);

/* The end of a sub-block's search, from the winning trial's codes L, on-grid flags and scale: the
 * groups re-coded at that scale (IQ2_XXS: all; the others: those off the grid) and the scale
 * refitted, a negative scale flipped, the grid indices. Returns 1, or BQ_EDOMAIN where ggml
 * aborts. */
int bq_iq2_conclude(int G, const bq_iq2_tables *t, bq_iq2_search_fn *search, const float *v,
                    const float *w, const float *waux, int8_t *L, const int *on, float scale,
                    uint8_t *signs, float *scale_out, uint16_t *gi);

/* One sub-block's search, the part of quantize_row_iq2_<xxs|xs|s>_impl between the weights and
 * the super-block's scale: x the 32 or 16 values, w their weights. Writes the sub-block's scale
 * (>= 0; 0 when it is skipped) to *scale, its grid indices (one per group) to gi and its sign
 * bytes to signs, and returns 1 when it holds values, 0 when ggml skips it, or BQ_EDOMAIN where
 * ggml aborts. */
typedef int bq_iq2_subblock_fn(int G, const bq_iq2_tables *t, const float *x, const float *w,
                               float *scale, uint16_t *gi, uint8_t *signs);
int bq_iq2_subblock__ref(int G, const bq_iq2_tables *t, const float *x, const float *w,
                         float *scale, uint16_t *gi, uint8_t *signs);

/* The super-block steps around the sub-blocks, shared by both versions: sigma2 of a super-block
 * (sum x^2 / 256; IQ2_S twice that), the weights of a sub-block (qw NULL, IQ2_S only:
 * sigma2 / 4 + x^2), and a super-block's bytes from its sub-blocks' results (sub: per sub-block
 * what the search returned, 0 or 1; gi and signs one per group). */
float bq_iq2_sigma2(int G, const float *x);
void bq_iq2_weights(int G, const float *x, const float *qw, float sigma2, float *w);
void bq_iq2_finish(int G, const int *sub, const float *scales, const uint16_t *gi,
                   const uint8_t *signs, uint8_t *block);

/* A quantize_rows kernel on top of a sub-block search: BQ_EINVAL for a row length that is not whole
 * super-blocks or, for IQ2_XXS and IQ2_XS, no weights; BQ_ENOTABLES before the tables are built;
 * BQ_EDOMAIN where ggml aborts (the output then unspecified). */
int bq_iq2_quantize_rows(int G, bq_iq2_subblock_fn *subblock, const float *x, void *y, size_t rows,
                         size_t cols, const float *qw);

#endif
