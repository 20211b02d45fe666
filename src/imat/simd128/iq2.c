/* IQ2_XXS, IQ2_XS and IQ2_S SIMD128 quantizers: bit-exact with ../iq2.c.
 *
 * The trial scales run four at a time, one per lane: each element's code for the four trials in
 * one vector, a group's four points (u) in another, and the sums sumqx and sumq2 of the four
 * trials accumulated lane by lane in ggml's element order, so each lane's sums are the reference's
 * bit for bit; the trials are then scanned in order as the reference scans them. A point off the
 * grid is searched among its neighbours four at a time (lanes: neighbours), each lane keeping its
 * first least distance and the lanes then ordered as ggml's scan would order them; the trials of
 * a batch that land on the same point (most of the time) share one pass over its list. A sub-block
 * holding a NaN, or whose IQ2_XXS start scale is NaN, is left to the reference: a NaN's payload
 * picks its code, and wasm arithmetic need not keep payloads. */
#include "../iq2.h"

#include <float.h>
#include <wasm_simd128.h>

#include "search.h"

/* A group's 8 magnitudes and square-root weights, each splatted. */
typedef struct {
  v128_t v[8], w[8];
} group8;

/* The distance terms of a group at scale s: lane c of term[i], for grid byte 2c + 1 (1, 3 or 5),
 * is waux_i (s (2c + 1) - v_i)^2 as the reference computes it (lane 3 unused). */
static inline void terms_of(const group8 *g, float s, v128_t *term) {
  const v128_t sq = wasm_f32x4_mul(wasm_f32x4_splat(s), wasm_f32x4_make(1, 3, 5, 0));
  for (int i = 0; i < 8; i++) {
    const v128_t diff = wasm_f32x4_sub(sq, g->v[i]);
    term[i] = wasm_f32x4_mul(wasm_f32x4_mul(g->w[i], diff), diff);
  }
}

/* bq_iq2_search__ref of point u at nt scales s[r] (trials whose codes landed on the same point),
 * with lanes being neighbours 4g + lane: the grid index of each into gi[r], or -1 when no distance
 * is below FLT_MAX. Each lane's term of element i is looked up in term[r][i] by a byte swizzle:
 * grid byte b = 2c + 1 of the lane's point picks bytes 4c..4c+3 = 2b - 2 + (0..3); the indices
 * depend on the list only, so the trials share them. */
static inline void search4(const bq_iq2_tables *t, int u, const group8 *g, int nt, const float *s,
                           int *gi) {
  const uint16_t *nb = t->neighbours - t->map[u] - 1;
  const int n = nb[0];
  v128_t term[4][8], best[4], at[4];
  for (int r = 0; r < nt; r++) {
    terms_of(g, s[r], term[r]);
    best[r] = wasm_f32x4_splat(FLT_MAX);
    at[r] = wasm_i32x4_splat(INT32_MAX);
  }
  const v128_t nv = wasm_i32x4_splat(n), k0123 = wasm_i32x4_splat(0x0100FFFE); /* -2,-1,0,1 */
  v128_t j = wasm_i32x4_make(0, 1, 2, 3);
  const uint64_t *grid = t->grid;
  for (int j0 = 0; j0 < n; j0 += 4) {
    /* lanes past the list's end read its first point and never replace */
    const v128_t a = wasm_v128_load64_lane(grid + nb[j0 + 1 < n ? 2 + j0 : 1],
                                           wasm_v128_load64_zero(grid + nb[1 + j0]), 1);
    const v128_t b =
        wasm_v128_load64_lane(grid + nb[j0 + 3 < n ? 4 + j0 : 1],
                              wasm_v128_load64_zero(grid + nb[j0 + 2 < n ? 3 + j0 : 1]), 1);
    const v128_t a2 = wasm_i8x16_add(a, a), b2 = wasm_i8x16_add(b, b);
    v128_t idx[8];
#define BQ_IQ2_IDX(i)                                                                            \
  idx[i] =                                                                                       \
      wasm_i8x16_add(wasm_i8x16_shuffle(a2, b2, i, i, i, i, 8 + i, 8 + i, 8 + i, 8 + i, 16 + i,  \
                                        16 + i, 16 + i, 16 + i, 24 + i, 24 + i, 24 + i, 24 + i), \
                     k0123)
    BQ_IQ2_IDX(0);
    BQ_IQ2_IDX(1);
    BQ_IQ2_IDX(2);
    BQ_IQ2_IDX(3);
    BQ_IQ2_IDX(4);
    BQ_IQ2_IDX(5);
    BQ_IQ2_IDX(6);
    BQ_IQ2_IDX(7);
#undef BQ_IQ2_IDX
    const v128_t live = wasm_i32x4_lt(j, nv);
    for (int r = 0; r < nt; r++) {
      /* d2 = 0 + t0 + ... + t7 in ggml; 0 + t0 is t0 up to the sign of a zero and a NaN's bits,
       * neither of which a comparison sees. */
      v128_t d2 = wasm_i8x16_swizzle(term[r][0], idx[0]);
      for (int i = 1; i < 8; i++) d2 = wasm_f32x4_add(d2, wasm_i8x16_swizzle(term[r][i], idx[i]));
      const v128_t m = wasm_v128_and(wasm_f32x4_lt(d2, best[r]), live);
      best[r] = wasm_v128_bitselect(d2, best[r], m);
      at[r] = wasm_v128_bitselect(j, at[r], m);
    }
    j = wasm_i32x4_add(j, wasm_i32x4_splat(4));
  }
  /* Each lane holds its first least distance (below FLT_MAX, or no index); ggml's scan keeps the
   * first index of the least distance overall: the least index among the lanes at the minimum.
   * (No lane holds a NaN: a NaN distance never replaces.) */
  for (int r = 0; r < nt; r++) {
    v128_t m = wasm_f32x4_min(best[r], wasm_i32x4_shuffle(best[r], best[r], 2, 3, 0, 1));
    m = wasm_f32x4_min(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
    v128_t k = wasm_v128_bitselect(at[r], wasm_i32x4_splat(INT32_MAX), wasm_f32x4_eq(best[r], m));
    k = wasm_i32x4_min(k, wasm_i32x4_shuffle(k, k, 2, 3, 0, 1));
    k = wasm_i32x4_min(k, wasm_i32x4_shuffle(k, k, 1, 0, 3, 2));
    const int sel = wasm_i32x4_extract_lane(k, 0);
    gi[r] = sel == INT32_MAX ? -1 : nb[1 + sel];
  }
}

static inline void codes_of(const bq_iq2_tables *t, int gi, int8_t *L) {
  for (int i = 0; i < 8; i++) L[i] = (int8_t)((bq_grid_u8(t->grid[gi], i) - 1) / 2);
}

/* The search as the shared steps call it. */
static int search(const bq_iq2_tables *t, int u, const float *v, const float *waux, float s,
                  int8_t *L) {
  group8 g;
  for (int i = 0; i < 8; i++) g.v[i] = wasm_f32x4_splat(v[i]), g.w[i] = wasm_f32x4_splat(waux[i]);
  int gi;
  search4(t, u, &g, 1, &s, &gi);
  if (gi >= 0) codes_of(t, gi, L);
  return gi;
}

static int subblock(int G, const bq_iq2_tables *t, const float *x, const float *w, float *scale_out,
                    uint16_t *gi, uint8_t *signs) {
  const int n = G == 256 ? 32 : 16, ng = n / 8, xxs = G == 256;
  v128_t nan = wasm_i32x4_splat(0);
  for (int i = 0; i < n; i += 4) {
    const v128_t e = wasm_v128_load(x + i);
    nan = wasm_v128_or(nan, wasm_f32x4_ne(e, e));
  }
  if (wasm_v128_any_true(nan)) return bq_iq2_subblock__ref(G, t, x, w, scale_out, gi, signs);
  float v[32], waux[32];
  const float max = bq_iq2_prepare(G, x, w, v, waux, signs);
  *scale_out = 0;
  if (max < (G == 1024 ? 1e-8f : 1e-15f)) return 0;
  int8_t L[32] = {0};
  float best = 0, scale, from;
  int nis;
  if (xxs) {
    scale = bq_make_qp_quants(32, 4, v, (uint8_t *)L, w);
    from = scale * 3; /* eff_max */
    if (from <= 0) return 0;
    if (from != from) return bq_iq2_subblock__ref(G, t, x, w, scale_out, gi, signs);
    nis = 6;
  } else {
    scale = max / 5;
    from = max;
    nis = 9;
  }
  group8 g[4];
  v128_t wv4[32], w4[32];
  for (int i = 0; i < n; i++) {
    wv4[i] = wasm_f32x4_splat(w[i] * v[i]);
    w4[i] = wasm_f32x4_splat(w[i]);
    g[i / 8].v[i % 8] = wasm_f32x4_splat(v[i]);
    g[i / 8].w[i % 8] = wasm_f32x4_splat(waux[i]);
  }
  const int ntrial = 2 * nis + 1;
  int on[4] = {1, 1, 1, 1};
  for (int t0 = 0; t0 < ntrial; t0 += 4) {
    const int nt = ntrial - t0 < 4 ? ntrial - t0 : 4;
    float ids[4], ss[4];
    for (int lane = 0; lane < 4; lane++) {
      const int is = -nis + t0 + (lane < nt ? lane : nt - 1);
      ids[lane] = (5 + is * 0.1f) / from;
      ss[lane] = 1 / ids[lane];
    }
    const v128_t id = wasm_v128_load(ids);
    int32_t l[32][4], u[4][4];
    for (int k = 0; k < ng; k++) {
      v128_t p = wasm_i32x4_splat(0);
      for (int i = 0; i < 8; i++) {
        const v128_t c = bq_grid_codes4(id, v[8 * k + i], 2);
        wasm_v128_store(l[8 * k + i], c);
        p = wasm_v128_or(p, wasm_i32x4_shl(c, 2 * i));
      }
      wasm_v128_store(u[k], p);
    }
    int on_aux[4][4];
    for (int k = 0; k < ng; k++) {
      int todo = 0; /* lanes off the grid, not yet searched */
      for (int lane = 0; lane < nt; lane++) {
        on_aux[lane][k] = t->map[u[k][lane]] >= 0;
        todo |= !on_aux[lane][k] << lane;
      }
      while (todo) {
        /* the lanes whose codes landed on the same point as the first one left: one search */
        const int p = u[k][__builtin_ctz(todo)];
        int lanes[4], m = 0;
        float sm[4];
        for (int o = 0; o < nt; o++)
          if (todo >> o & 1 && u[k][o] == p) lanes[m] = o, sm[m++] = ss[o], todo &= ~(1 << o);
        int gm[4];
        search4(t, p, &g[k], m, sm, gm);
        for (int r = 0; r < m; r++) {
          if (gm[r] < 0) return BQ_EDOMAIN;
          int8_t c[8];
          codes_of(t, gm[r], c);
          for (int i = 0; i < 8; i++) l[8 * k + i][lanes[r]] = c[i];
        }
      }
    }
    v128_t sx = wasm_f32x4_splat(0.0f), s2 = sx;
    for (int i = 0; i < n; i++) {
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
        for (int i = 0; i < n; i++) L[i] = (int8_t)l[i][lane];
        memcpy(on, on_aux[lane], sizeof on);
      }
  }
  return bq_iq2_conclude(G, t, search, v, w, waux, L, on, scale, signs, scale_out, gi);
}

BQ_QUANTIZE_ROWS_PROTO(iq2_xxs, __simd128) {
  return bq_iq2_quantize_rows(256, subblock, x, y, rows, cols, qw);
}

BQ_QUANTIZE_ROWS_PROTO(iq2_xs, __simd128) {
  return bq_iq2_quantize_rows(512, subblock, x, y, rows, cols, qw);
}

BQ_QUANTIZE_ROWS_PROTO(iq2_s, __simd128) {
  return bq_iq2_quantize_rows(1024, subblock, x, y, rows, cols, qw);
}
