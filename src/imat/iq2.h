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

#endif
