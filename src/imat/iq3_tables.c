/* The search tables of the IQ3 quantizers: ggml's iq3xs_init_impl(256) for IQ3_XXS and (512) for
 * IQ3_S, built into memory the caller owns (tables.c finds them by type).
 *
 * A point of the search is 4 codes 0..7, indexed u = c0 | c1 << 3 | c2 << 6 | c3 << 9 (4096 of
 * them); the grid is the G of them a block can store. ggml's tables, in this order:
 *   grid:       G uint32, point k's byte i = 2 * c_i + 1 (the odd magnitudes 1..15);
 *   map:        4096 int32, u -> its grid index, or for a point off the grid -(o + 1), o the offset
 *               of its neighbour list;
 *   neighbours: per off-grid point in u order, a uint16 count n then n grid indices: every grid
 *               point whose squared distance to u is among the nwant smallest distances (2 for
 *               the 256 grid, 3 for 512), ordered by (distance, index).
 * ggml sorts all G (distance, index) pairs of every point with qsort. Distances of odd codes are
 * small integers (at most 4 * 14^2), so here each point's distances are computed once, the nwant
 * smallest distinct ones found in the same pass, and the list written by one more pass per
 * distance in index order: the same lists, without the sort.
 *
 * The grids are the decoders' tables (src/ref/iq_grids.c): bq_iq3s_grid holds exactly ggml's
 * 512-point search grid; bq_iq3xxs_grid holds the 256-point grid's magnitudes {4, 12, ..., 52, 62},
 * code c the c-th of them. The test compares all three tables with ggml's own.
 *
 * SIMD128 builds append what the SIMD search reads (simd128/iq3.c, layout in iq3.h): the grid
 * points as floats, and each list's grid points four neighbours at a time, transposed. */
#include "iq3.h"

enum { MAP = 4096 };

/* Squared distance of point u to the grid point of bytes g (both as odd magnitudes). */
static inline int dist2(int u, uint32_t g) {
  int d2 = 0;
  for (int i = 0; i < 4; i++) {
    const int d = (int)(g >> 8 * i & 0xFF) - (2 * (u >> 3 * i & 7) + 1);
    d2 += d * d;
  }
  return d2;
}

/* The grid of G points as ggml's search has it (bytes 2c + 1). */
static void grid_of(int G, uint32_t *grid) {
  for (int k = 0; k < G; k++) {
    if (G == 512) {
      grid[k] = bq_iq3s_grid[k];
      continue;
    }
    uint32_t g = 0;
    for (int i = 0; i < 4; i++) {
      const int m = bq_iq3xxs_grid[k] >> 8 * i & 0xFF; /* 4, 12, ..., 52, then 62 for code 7 */
      const int c = m == 62 ? 7 : (m - 4) / 8;
      g |= (uint32_t)(2 * c + 1) << 8 * i;
    }
    grid[k] = g;
  }
}

/* The index u of the point of grid bytes g. */
static inline int index_of(uint32_t g) {
  int u = 0;
  for (int i = 0; i < 4; i++) u |= ((int)(g >> 8 * i & 0xFF) - 1) / 2 << 3 * i;
  return u;
}

static int build(int G, void *mem) {
  const int nwant = G == 256 ? 2 : 3;
  const size_t nlist = G == 256 ? BQ_IQ3XXS_NEIGHBOURS : BQ_IQ3S_NEIGHBOURS;
  uint32_t *grid = mem;
  int32_t *map = (int32_t *)(grid + G);
  uint16_t *nb = (uint16_t *)(map + MAP);
  grid_of(G, grid);
  for (int u = 0; u < MAP; u++) map[u] = -1;
  for (int k = 0; k < G; k++) map[index_of(grid[k])] = k;
  size_t o = 0;
  uint16_t d2[512];
  for (int u = 0; u < MAP; u++) {
    if (map[u] >= 0) continue;
    /* The nwant smallest distinct distances, ascending (INT32_MAX: none yet), in one pass. */
    int best[3] = {INT32_MAX, INT32_MAX, INT32_MAX};
    for (int k = 0; k < G; k++) {
      const int d = dist2(u, grid[k]);
      d2[k] = (uint16_t)d;
      int s = 0;
      while (s < nwant && best[s] < d) s++;
      if (s == nwant || best[s] == d) continue;
      for (int t = nwant - 1; t > s; t--) best[t] = best[t - 1];
      best[s] = d;
    }
    size_t n = 0;
    for (int k = 0; k < G; k++) n += d2[k] <= best[nwant - 1];
    if (o + 1 + n > nlist) return BQ_EINVAL; /* cannot happen: the sizes are ggml's */
    map[u] = -(int32_t)o - 1;
    nb[o++] = (uint16_t)n;
    for (int s = 0; s < nwant; s++)
      for (int k = 0; k < G; k++)
        if (d2[k] == best[s]) nb[o++] = (uint16_t)k;
  }
  if (o != nlist) return BQ_EINVAL;
#ifdef __wasm_simd128__
  return bq_iq3_simd_tables_build(G, mem);
#else
  return BQ_OK;
#endif
}

static void *xxs_mem, *s_mem;
static int build_xxs(void *mem) { return build(256, mem); }
static int build_s(void *mem) { return build(512, mem); }

const bq_tables_family bq_iq3xxs_family = {BQ_IQ3_TABLE_BYTES(256), build_xxs, &xxs_mem};
const bq_tables_family bq_iq3s_family = {BQ_IQ3_TABLE_BYTES(512), build_s, &s_mem};

int bq_iq3_tables_of(int G, bq_iq3_tables *t) {
  uint8_t *mem = G == 256 ? xxs_mem : s_mem;
  if (!mem) return 0;
  t->size = G;
  t->grid = (const uint32_t *)mem;
  t->map = (const int32_t *)(t->grid + G);
  t->neighbours = (const uint16_t *)(t->map + MAP);
  t->simd = mem + BQ_IQ3_GGML_BYTES(G);
  return 1;
}
