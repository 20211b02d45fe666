/* The search tables of the 8-element grid quantizers: ggml's iq2xs_init_impl for IQ2_XXS (grid of
 * 256), IQ2_XS (512), IQ2_S (1024) and IQ1_S / IQ1_M (2048, one set for both), built into memory
 * the caller owns (tables.c finds them by type). One builder serves all four grids.
 *
 * A point of the search is 8 codes 0..3, indexed u = c0 | c1 << 2 | ... | c7 << 14; ggml's tables,
 * in this order:
 *   grid:       G uint64, point k's byte i = 2 * c_i + 1 (1, 3 or 5: the grids use codes 0..2);
 *   map:        43692 int32 (every u up to 2 * 0x5555 + 1), u -> its grid index, or for a point
 *               off the grid -(o + 1), o the offset of its neighbour list;
 *   neighbours: per off-grid point in u order, a uint16 count n then n grid indices: every grid
 *               point whose squared distance to u is among the nwant smallest distances (2 for
 *               the 256 and 512 grids, 1 for 1024, 3 for 2048), ordered by (distance, index).
 * Points with a code 3 are off every grid and get lists too. ggml sorts all G (distance, index)
 * pairs of every point with qsort. The distances of odd bytes are small integers (at most
 * 8 * 6^2), so here each point visits the grid points nearest in its high 4 codes first (build()
 * says how), stops where no farther one can be among the nwant smallest distinct distances, and
 * writes the list from the points it kept, one pass per distance in index order: the same lists,
 * without sorting G pairs per point.
 *
 * The grids are the decoders' tables (src/ref/iq_grids.c): bq_iq2xxs_grid, bq_iq2xs_grid and
 * bq_iq2s_grid hold magnitudes {8, 25, 43}, code c the c-th of them; bq_iq1s_grid holds int8
 * values {-1, 0, 1}, code v + 1. The test compares all three tables with ggml's own. */
#include "iq2.h"

/* The decode grid of G points, and a grid byte's code. */
static const uint64_t *decode_grid(int G) {
  return G == 256    ? bq_iq2xxs_grid
         : G == 512  ? bq_iq2xs_grid
         : G == 1024 ? bq_iq2s_grid
                     : bq_iq1s_grid;
}
static inline int code_of(int G, uint64_t g, int i) {
  if (G == 2048) return bq_grid_i8(g, i) + 1;
  const int m = bq_grid_u8(g, i);
  return m == 8 ? 0 : m == 25 ? 1 : 2;
}

/* Squared distance of 4 codes a to 4 codes b (2 bits each, as odd bytes 2c + 1). */
static inline int dist4(int a, int b) {
  int d2 = 0;
  for (int i = 0; i < 4; i++) {
    const int d = 2 * ((a >> 2 * i & 3) - (b >> 2 * i & 3));
    d2 += d * d;
  }
  return d2;
}

/* The distance of point u to grid point k is that of their low 4 codes plus that of their high 4,
 * at least the high part: per 256 points u sharing their high codes, the grid points are ordered
 * by the high part (a counting sort: it is at most 4 * 6^2), and each u visits them in that order
 * only until the high part alone exceeds the largest distance it keeps, adding the low part from
 * two tables of 2 codes. The points visited that are within that distance, ordered by index, give
 * the list. */
enum { DMAX4 = 4 * 36 };

static int build(int G, void *mem) {
  const int nwant = G == 1024 ? 1 : G == 2048 ? 3 : 2;
  const size_t nlist = BQ_IQ2_NEIGHBOURS(G);
  uint64_t *grid = mem;
  int32_t *map = (int32_t *)(grid + G);
  uint16_t *nb = (uint16_t *)(map + BQ_IQ2_MAP);
  const uint64_t *dec = decode_grid(G);
  uint8_t lo[2048], hi[2048]; /* grid point k's codes 0-3 and 4-7 */
  for (int u = 0; u < BQ_IQ2_MAP; u++) map[u] = -1;
  for (int k = 0; k < G; k++) {
    uint64_t g = 0;
    int u = 0;
    for (int i = 0; i < 8; i++) {
      const int c = code_of(G, dec[k], i);
      g |= (uint64_t)(2 * c + 1) << 8 * i;
      u |= c << 2 * i;
    }
    grid[k] = g;
    map[u] = k;
    lo[k] = (uint8_t)(u & 255);
    hi[k] = (uint8_t)(u >> 8);
  }
  size_t o = 0;
  uint16_t dhi[2048], order[2048], cand[2048], cd[2048];
  for (int u = 0; u < BQ_IQ2_MAP; u++) {
    if ((u & 255) == 0) {
      int start[DMAX4 + 2] = {0};
      for (int k = 0; k < G; k++) {
        dhi[k] = (uint16_t)dist4(u >> 8, hi[k]);
        start[dhi[k] + 1]++;
      }
      for (int d = 1; d <= DMAX4 + 1; d++) start[d] += start[d - 1];
      for (int k = 0; k < G; k++) order[start[dhi[k]]++] = (uint16_t)k;
    }
    if (map[u] >= 0) continue;
    uint8_t p01[16], p23[16]; /* codes 0-1 and 2-3 of a low part against u's */
    for (int b = 0; b < 16; b++) {
      p01[b] = (uint8_t)dist4(u & 15, b);
      p23[b] = (uint8_t)dist4(u >> 4 & 15, b);
    }
    /* The nwant smallest distinct distances, ascending (INT32_MAX: none yet), and the points
     * within the largest so far. */
    int best[3] = {INT32_MAX, INT32_MAX, INT32_MAX}, m = 0;
    for (int r = 0; r < G; r++) {
      const int k = order[r];
      if (dhi[k] > best[nwant - 1]) break;
      const int d = p01[lo[k] & 15] + p23[lo[k] >> 4] + dhi[k];
      if (d > best[nwant - 1]) continue;
      cand[m] = (uint16_t)k;
      cd[m++] = (uint16_t)d;
      if (d == best[nwant - 1]) continue;
      int s = 0;
      while (best[s] < d) s++;
      if (best[s] == d) continue;
      for (int t = nwant - 1; t > s; t--) best[t] = best[t - 1];
      best[s] = d;
    }
    /* The list: the points within the largest of those distances, by distance then index. */
    int n = 0;
    for (int j = 0; j < m; j++)
      if (cd[j] <= best[nwant - 1]) {
        const uint16_t k = cand[j], d = cd[j];
        int at = n++;
        for (; at > 0 && cand[at - 1] > k; at--) cand[at] = cand[at - 1], cd[at] = cd[at - 1];
        cand[at] = k, cd[at] = d;
      }
    if (o + 1 + (size_t)n > nlist) return BQ_EINVAL; /* cannot happen: the sizes are ggml's */
    map[u] = -(int32_t)o - 1;
    nb[o++] = (uint16_t)n;
    for (int s = 0; s < nwant; s++)
      for (int j = 0; j < n; j++)
        if (cd[j] == best[s]) nb[o++] = cand[j];
  }
  return o == nlist ? BQ_OK : BQ_EINVAL;
}

static void *xxs_mem, *xs_mem, *s_mem, *iq1_mem;
static int build_xxs(void *mem) { return build(256, mem); }
static int build_xs(void *mem) { return build(512, mem); }
static int build_s(void *mem) { return build(1024, mem); }
static int build_iq1(void *mem) { return build(2048, mem); }

const bq_tables_family bq_iq2xxs_family = {BQ_IQ2_TABLE_BYTES(256), build_xxs, &xxs_mem};
const bq_tables_family bq_iq2xs_family = {BQ_IQ2_TABLE_BYTES(512), build_xs, &xs_mem};
const bq_tables_family bq_iq2s_family = {BQ_IQ2_TABLE_BYTES(1024), build_s, &s_mem};
const bq_tables_family bq_iq1s_family = {BQ_IQ2_TABLE_BYTES(2048), build_iq1, &iq1_mem};

int bq_iq2_tables_of(int G, bq_iq2_tables *t) {
  void *mem = G == 256    ? xxs_mem
              : G == 512  ? xs_mem
              : G == 1024 ? s_mem
              : G == 2048 ? iq1_mem
                          : NULL;
  if (!mem) return 0;
  t->size = G;
  t->grid = mem;
  t->map = (const int32_t *)(t->grid + G);
  t->neighbours = (const uint16_t *)(t->map + BQ_IQ2_MAP);
  return 1;
}
