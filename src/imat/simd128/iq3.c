/* IQ3_XXS and IQ3_S SIMD128 quantizers: bit-exact with ../iq3.c.
 *
 * The trial scales run four at a time, one per lane: each element's code for the four trials in
 * one vector, a group's four points (u) in another, and the sums sumqx and sumq2 of the four
 * trials accumulated lane by lane in ggml's element order, so each lane's sums are the reference's
 * bit for bit; the trials are then scanned in order as the reference scans them. A point off the
 * grid is searched among its neighbours four at a time (lanes: neighbours, from the transposed
 * copy of the lists in the tables' SIMD part), each lane keeping its first least distance and the
 * lanes then ordered as ggml's scan would order them; or, when several trials of a batch land on
 * the same point (half the time), in one ordered scan of the list for all of them (lanes: trials).
 * A sub-block holding a NaN is left to the reference: the NaN's payload picks its code, and wasm
 * arithmetic need not keep payloads. */
#include "../iq3.h"

#include <float.h>
#include <wasm_simd128.h>

#include "search.h"

int bq_iq3_simd_tables_build(int G, void *mem) {
  bq_iq3_tables t;
  t.size = G;
  t.grid = mem;
  t.map = (const int32_t *)(t.grid + G);
  t.neighbours = (const uint16_t *)(t.map + 4096);
  float *gridf = (float *)((uint8_t *)mem + BQ_IQ3_GGML_BYTES(G));
  uint32_t *first = (uint32_t *)(gridf + 4 * G);
  uint8_t *q = (uint8_t *)(first + 4096);
  for (int k = 0; k < G; k++)
    for (int i = 0; i < 4; i++) gridf[4 * k + i] = (float)(t.grid[k] >> 8 * i & 0xFF);
  uint32_t g = 0;
  for (int u = 0; u < 4096; u++) {
    first[u] = 0;
    if (t.map[u] >= 0) continue;
    const uint16_t *nb = t.neighbours - t.map[u] - 1;
    first[u] = g;
    for (int j0 = 0; j0 < nb[0]; j0 += 4, g++)
      for (int lane = 0; lane < 4; lane++)
        for (int i = 0; i < 4; i++)
          q[16 * g + 4 * i + lane] =
              j0 + lane < nb[0] ? (uint8_t)(t.grid[nb[1 + j0 + lane]] >> 8 * i & 0xFF) : 0;
  }
  return g == (G == 256 ? BQ_IQ3XXS_GROUPS : BQ_IQ3S_GROUPS) ? BQ_OK : BQ_EINVAL;
}

/* The parts of the SIMD tables. */
static inline const v128_t *gridf_of(const bq_iq3_tables *t) { return (const v128_t *)t->simd; }
static inline const uint32_t *first_of(const bq_iq3_tables *t) {
  return (const uint32_t *)(t->simd + 16 * t->size);
}

/* A group's 4 magnitudes and square-root weights, each splatted. */
typedef struct {
  v128_t v[4], w[4];
} group4;

/* bq_iq3_search__ref over the SIMD part of the tables, lanes being neighbours 4g + lane: the grid
 * index, or -1 when no distance is below FLT_MAX. */
static inline int search4(const bq_iq3_tables *t, int u, const group4 *g, float s) {
  const uint16_t *nb = t->neighbours - t->map[u] - 1;
  const uint32_t *first = first_of(t);
  const uint8_t *q = (const uint8_t *)(first + 4096) + 16 * first[u];
  const v128_t vs = wasm_f32x4_splat(s), n = wasm_i32x4_splat(nb[0]);
  v128_t best = wasm_f32x4_splat(FLT_MAX), at = wasm_i32x4_splat(INT32_MAX);
  v128_t j = wasm_i32x4_make(0, 1, 2, 3);
  for (int j0 = 0; j0 < nb[0]; j0 += 4, q += 16) {
    const v128_t b = wasm_v128_load(q), b0 = wasm_u16x8_extend_low_u8x16(b),
                 b1 = wasm_u16x8_extend_high_u8x16(b);
    const v128_t qi[4] = {wasm_u32x4_extend_low_u16x8(b0), wasm_u32x4_extend_high_u16x8(b0),
                          wasm_u32x4_extend_low_u16x8(b1), wasm_u32x4_extend_high_u16x8(b1)};
    /* d2 = 0 + t0 + t1 + t2 + t3 in ggml; 0 + t0 is t0 up to the sign of a zero and a NaN's bits,
     * neither of which a comparison sees. */
    v128_t d2 = wasm_f32x4_splat(0.0f);
    for (int i = 0; i < 4; i++) {
      const v128_t diff =
          wasm_f32x4_sub(wasm_f32x4_mul(vs, wasm_f32x4_convert_i32x4(qi[i])), g->v[i]);
      const v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(g->w[i], diff), diff);
      d2 = i ? wasm_f32x4_add(d2, term) : term;
    }
    /* lanes past the list's end never replace */
    const v128_t m = wasm_v128_and(wasm_f32x4_lt(d2, best), wasm_i32x4_lt(j, n));
    best = wasm_v128_bitselect(d2, best, m);
    at = wasm_v128_bitselect(j, at, m);
    j = wasm_i32x4_add(j, wasm_i32x4_splat(4));
  }
  /* Each lane holds its first least distance (below FLT_MAX, or no index); ggml's scan keeps the
   * first index of the least distance overall: the least index among the lanes at the minimum.
   * (No lane holds a NaN: a NaN distance never replaces.) */
  v128_t m = wasm_f32x4_min(best, wasm_i32x4_shuffle(best, best, 2, 3, 0, 1));
  m = wasm_f32x4_min(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
  v128_t k = wasm_v128_bitselect(at, wasm_i32x4_splat(INT32_MAX), wasm_f32x4_eq(best, m));
  k = wasm_i32x4_min(k, wasm_i32x4_shuffle(k, k, 2, 3, 0, 1));
  k = wasm_i32x4_min(k, wasm_i32x4_shuffle(k, k, 1, 0, 3, 2));
  const int sel = wasm_i32x4_extract_lane(k, 0);
  return sel == INT32_MAX ? -1 : nb[1 + sel];
}

/* The searches of several trials (lanes; scales s) of the same point u, each lane scanning the
 * list in order as ggml does (the first least distance below FLT_MAX): the grid index of each lane
 * into gi (-1: none). Costs one list scan for up to 4 trials. */
static inline void search_trials(const bq_iq3_tables *t, int u, const group4 *g, v128_t s,
                                 int32_t *gi) {
  const uint16_t *nb = t->neighbours - t->map[u] - 1;
  const v128_t *gridf = gridf_of(t);
  v128_t best = wasm_f32x4_splat(FLT_MAX), at = wasm_i32x4_splat(-1);
  for (int j = 1; j <= nb[0]; j++) {
    const v128_t p = gridf[nb[j]];
    const v128_t q[4] = {wasm_i32x4_shuffle(p, p, 0, 0, 0, 0), wasm_i32x4_shuffle(p, p, 1, 1, 1, 1),
                         wasm_i32x4_shuffle(p, p, 2, 2, 2, 2),
                         wasm_i32x4_shuffle(p, p, 3, 3, 3, 3)};
    v128_t d2 = wasm_f32x4_splat(0.0f);
    for (int i = 0; i < 4; i++) {
      const v128_t diff = wasm_f32x4_sub(wasm_f32x4_mul(s, q[i]), g->v[i]);
      const v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(g->w[i], diff), diff);
      d2 = i ? wasm_f32x4_add(d2, term) : term;
    }
    const v128_t m = wasm_f32x4_lt(d2, best);
    best = wasm_v128_bitselect(d2, best, m);
    at = wasm_v128_bitselect(wasm_i32x4_splat(nb[j]), at, m);
  }
  wasm_v128_store(gi, at);
}

/* The search as the shared steps call it. */
static int search(const bq_iq3_tables *t, int u, const float *v, const float *waux, float s,
                  int8_t *L) {
  group4 g;
  for (int i = 0; i < 4; i++) g.v[i] = wasm_f32x4_splat(v[i]), g.w[i] = wasm_f32x4_splat(waux[i]);
  const int gi = search4(t, u, &g, s);
  if (gi >= 0) bq_iq3_codes_of(t->grid[gi], L);
  return gi;
}

static int subblock(int G, const bq_iq3_tables *t, const float *x, const float *w, float *scale_out,
                    uint16_t *gi, uint8_t *signs) {
  v128_t nan = wasm_i32x4_splat(0);
  for (int i = 0; i < 32; i += 4) {
    const v128_t e = wasm_v128_load(x + i);
    nan = wasm_v128_or(nan, wasm_f32x4_ne(e, e));
  }
  if (wasm_v128_any_true(nan)) return bq_iq3_subblock__ref(G, t, x, w, scale_out, gi, signs);
  const int xxs = G == 256;
  float v[32], waux[32];
  const float max = bq_iq3_prepare(G, x, w, v, waux, signs);
  if (xxs ? max < 1e-8f : !max) {
    *scale_out = 0;
    return 0;
  }
  group4 g[8];
  v128_t wv4[32], w4[32];
  for (int i = 0; i < 32; i++) {
    wv4[i] = wasm_f32x4_splat(w[i] * v[i]);
    w4[i] = wasm_f32x4_splat(w[i]);
    g[i / 4].v[i % 4] = wasm_f32x4_splat(v[i]);
    g[i / 4].w[i % 4] = wasm_f32x4_splat(waux[i]);
  }
  const int nis = xxs ? 15 : 9, ntrial = 2 * nis + 1;
  int8_t L[32] = {0};
  float best = 0, scale = max / (2 * BQ_IQ3_KMAXQ - 1);
  int on[8];
  for (int k = 0; k < 8; k++) on[k] = xxs;
  for (int t0 = 0; t0 < ntrial; t0 += 4) {
    const int nt = ntrial - t0 < 4 ? ntrial - t0 : 4;
    float ids[4], ss[4];
    for (int lane = 0; lane < 4; lane++) {
      const int is = -nis + t0 + (lane < nt ? lane : nt - 1);
      ids[lane] = (2 * BQ_IQ3_KMAXQ - 1 + is * 0.2f) / max;
      ss[lane] = 1 / ids[lane];
    }
    const v128_t id = wasm_v128_load(ids), id_scales = wasm_v128_load(ss);
    int32_t l[32][4], u[8][4];
    v128_t c[4];
    for (int k = 0; k < 8; k++) {
      for (int i = 0; i < 4; i++) {
        c[i] = bq_grid_codes4(id, v[4 * k + i], BQ_IQ3_KMAXQ - 1);
        wasm_v128_store(l[4 * k + i], c[i]);
      }
      const v128_t p = wasm_v128_or(wasm_v128_or(c[0], wasm_i32x4_shl(c[1], 3)),
                                    wasm_v128_or(wasm_i32x4_shl(c[2], 6), wasm_i32x4_shl(c[3], 9)));
      wasm_v128_store(u[k], p);
    }
    int on_aux[4][8];
    for (int k = 0; k < 8; k++) {
      int todo = 0; /* lanes off the grid, not yet searched */
      for (int lane = 0; lane < nt; lane++) {
        on_aux[lane][k] = t->map[u[k][lane]] >= 0;
        todo |= !on_aux[lane][k] << lane;
      }
      while (todo) {
        const int lane = __builtin_ctz(todo), p = u[k][lane];
        int same = 0;
        for (int o = lane; o < nt; o++) same |= (todo >> o & 1 && u[k][o] == p) << o;
        todo &= ~same;
        int32_t gi[4];
        const int n = t->neighbours[-t->map[p] - 1];
        /* One scan for the trials sharing the point where it costs less than their own searches
         * (about 29 operations a neighbour for the scan, 40 per 4 neighbours plus 25 a search). */
        if (__builtin_popcount(same) * ((n + 3) / 4 * 40 + 25) > 29 * n)
          search_trials(t, p, &g[k], id_scales, gi);
        else
          for (int o = lane; o < nt; o++)
            if (same >> o & 1) gi[o] = search4(t, p, &g[k], ss[o]);
        for (int o = lane; o < nt; o++) {
          if (!(same >> o & 1)) continue;
          if (gi[o] < 0) return BQ_EDOMAIN;
          int8_t c[4];
          bq_iq3_codes_of(t->grid[gi[o]], c);
          for (int i = 0; i < 4; i++) l[4 * k + i][o] = c[i];
        }
      }
    }
    v128_t sx = wasm_f32x4_splat(0.0f), s2 = sx;
    for (int i = 0; i < 32; i++) {
      const v128_t q = wasm_f32x4_convert_i32x4(
          wasm_i32x4_add(wasm_i32x4_shl(wasm_v128_load(l[i]), 1), wasm_i32x4_splat(1)));
      sx = wasm_f32x4_add(sx, wasm_f32x4_mul(wv4[i], q));
      s2 = wasm_f32x4_add(s2, wasm_f32x4_mul(wasm_f32x4_mul(w4[i], q), q));
    }
    float sumqx[4], sumq2[4];
    wasm_v128_store(sumqx, sx);
    wasm_v128_store(sumq2, s2);
    for (int lane = 0; lane < nt; lane++)
      if (sumq2[lane] > 0 && sumqx[lane] * sumqx[lane] > best * sumq2[lane]) {
        scale = sumqx[lane] / sumq2[lane];
        best = scale * sumqx[lane];
        for (int i = 0; i < 32; i++) L[i] = (int8_t)l[i][lane];
        memcpy(on, on_aux[lane], sizeof on);
      }
  }
  return bq_iq3_conclude(G, t, search, v, w, waux, L, on, scale, signs, scale_out, gi);
}

BQ_QUANTIZE_ROWS_PROTO(iq3_xxs, __simd128) {
  return bq_iq3_quantize_rows(256, subblock, x, y, rows, cols, qw);
}

BQ_QUANTIZE_ROWS_PROTO(iq3_s, __simd128) {
  return bq_iq3_quantize_rows(512, subblock, x, y, rows, cols, qw);
}
