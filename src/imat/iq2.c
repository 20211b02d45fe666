/* IQ2_XXS, IQ2_XS and IQ2_S quantizers: ggml's quantize_iq2_xxs (quantize_row_iq2_xxs_impl, grid
 * of 256), quantize_iq2_xs (quantize_row_iq2_xs_impl, 512) and quantize_iq2_s
 * (quantize_row_iq2_s_impl, 1024). IQ2_XXS and IQ2_XS need importance weights (ggml asserts them;
 * here NULL weights give BQ_EINVAL); IQ2_S without them weighs x^2 + sigma2 / 4.
 *
 * Per super-block of 256: sigma2 = sum x^2 / 256 (IQ2_S: twice that) and per element a weight
 * qw * sqrt(sigma2 + x^2). Per sub-block of 32 (IQ2_XXS) or 16 (the others), in groups of 8
 * sharing a sign byte: magnitudes |x| (IQ2_XXS and IQ2_XS keep an even number of negative signs per
 * group, flipping the element of least w * x^2, and store 7 sign bits). Sub-blocks whose largest
 * magnitude is below 1e-15 (IQ2_S: 1e-8) are skipped. Trial scales 1 / id: IQ2_XXS starts from
 * make_qp_quants' scale s0 (codes 0..4; skipped too when 3 s0 is not positive), id =
 * (5 + 0.1 is) / (3 s0) for is = -6..6; the others id = (5 + 0.1 is) / max for is = -9..9. Each
 * group of 8 magnitudes takes codes c = clamp(nearest_int((id * |x| - 1) / 2), 0, 2); if that
 * point is off the grid, the neighbour of least sum sqrt(w) (scale (2c + 1) - |x|)^2 in its list
 * (iq2_find_best_neighbour); the trial whose codes give the largest sumqx^2 / sumq2 wins (the
 * first on ties). Then all groups (IQ2_XXS) or those still off the grid (the others) are re-coded
 * at the winning scale, which is refitted. The super-block stores d = max scale / 31 (IQ2_S: times
 * 0.9875) and 4-bit scales nearest_int((scale / d - 1) / 2).
 *
 * Where ggml aborts (a neighbour search that finds no distance below FLT_MAX: NaN or overflowing
 * weights; a NaN scale), the kernels return BQ_EDOMAIN. NaN bits reach the bytes where a NaN
 * magnitude's payload becomes its code through nearest_int, which the fp.h arithmetic keeps as
 * x86-64 does. */
#include "iq2.h"

#include <float.h>

enum { KMAXQ = 3 };

/* Codes 0..2 of a magnitude at inverse scale id, ggml's MAX(0, MIN(2, nearest_int(...))). */
static inline int code_of(float id, float v) {
  const int l = bq_nearest_int(bq_mul(0.5f, bq_sub(bq_mul(id, v), 1.0f)));
  return l < 0 ? 0 : l > KMAXQ - 1 ? KMAXQ - 1 : l;
}

/* ggml's uint16 index u of 8 codes (int8, as ggml ORs them in: only codes 0..3 stay in range; a
 * negative one, from IQ2_XXS's make_qp_quants codes at a NaN scale, sets all the bits above it,
 * as gcc's shift of a negative int does, without the undefined behaviour). */
static inline int point_of(const int8_t *L) {
  unsigned u = 0;
  for (int i = 0; i < 8; i++) u |= (unsigned)L[i] << 2 * i;
  return (uint16_t)u;
}

int bq_iq2_search__ref(const bq_iq2_tables *t, int u, const float *v, const float *waux, float s,
                       int8_t *L) {
  const uint16_t *nb = t->neighbours - t->map[u] - 1;
  float best = FLT_MAX;
  int gi = -1;
  for (int j = 1; j <= nb[0]; j++) {
    const uint64_t g = t->grid[nb[j]];
    float d2 = 0;
    for (int i = 0; i < 8; i++) {
      const float diff = s * (float)bq_grid_u8(g, i) - v[i];
      d2 += waux[i] * diff * diff;
    }
    if (d2 < best) {
      best = d2;
      gi = nb[j];
    }
  }
  if (gi >= 0)
    for (int i = 0; i < 8; i++) L[i] = (int8_t)((bq_grid_u8(t->grid[gi], i) - 1) / 2);
  return gi;
}

/* Codes of the group of 8 magnitudes v at inverse scale id, moved onto the grid (the neighbour
 * nearest at scale s when off it). Returns the grid index (-1: ggml aborts) and whether the codes
 * were on the grid. */
static int group(const bq_iq2_tables *t, bq_iq2_search_fn *search, const float *v,
                 const float *waux, float id, float s, int8_t *L, int *on_grid) {
  for (int i = 0; i < 8; i++) L[i] = (int8_t)code_of(id, v[i]);
  const int u = point_of(L);
  *on_grid = t->map[u] >= 0;
  if (*on_grid) return t->map[u];
  return search(t, u, v, waux, s, L);
}

float bq_iq2_prepare(int G, const float *x, const float *w, float *v, float *waux, uint8_t *signs) {
  const int n = G == 256 ? 32 : 16, even = G != 1024;
  for (int i = 0; i < n; i++) waux[i] = sqrtf(w[i]);
  for (int k = 0; k < n / 8; k++) signs[k] = bq_imat_signs8(x + 8 * k, w + 8 * k, v + 8 * k, even);
  float max = v[0];
  for (int i = 1; i < n; i++) max = max > v[i] ? max : v[i];
  return max;
}

int bq_iq2_conclude(int G, const bq_iq2_tables *t, bq_iq2_search_fn *search, const float *v,
                    const float *w, const float *waux, int8_t *L, const int *on, float scale,
                    uint8_t *signs, float *scale_out, uint16_t *gi) {
  const int n = G == 256 ? 32 : 16, ng = n / 8, xxs = G == 256;
  int off = 0;
  for (int k = 0; k < ng; k++) off += !on[k];
  if ((xxs || off > 0) && scale > 0) {
    const float id = 1 / scale;
    for (int k = 0; k < ng; k++) {
      if (!xxs && on[k]) continue;
      int on_grid;
      if (group(t, search, v + 8 * k, waux + 8 * k, id, scale, L + 8 * k, &on_grid) < 0)
        return BQ_EDOMAIN;
    }
    float sumqx, sumq2;
    bq_imat_grid_sums(n, w, v, L, &sumqx, &sumq2);
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  if (scale < 0) {
    scale = -scale;
    for (int k = 0; k < ng; k++) signs[k] = (uint8_t)(G != 1024 ? ~signs[k] & 127 : ~signs[k]);
  }
  for (int k = 0; k < ng; k++) {
    const int u = point_of(L + 8 * k);
    /* ggml: "Oops: found point not on grid" (reached only with IQ2_XXS's make_qp_quants codes,
     * whose scale was NaN: then ggml may read past its map, and aborts on the scale below). */
    const int g = u < BQ_IQ2_MAP ? t->map[u] : -1;
    if (g < 0) return BQ_EDOMAIN;
    gi[k] = (uint16_t)g;
  }
  if (!(scale >= 0)) return BQ_EDOMAIN; /* GGML_ASSERT(scale >= 0): a NaN scale */
  *scale_out = scale;
  return 1;
}

int bq_iq2_subblock__ref(int G, const bq_iq2_tables *t, const float *x, const float *w,
                         float *scale_out, uint16_t *gi, uint8_t *signs) {
  const int n = G == 256 ? 32 : 16, ng = n / 8, xxs = G == 256;
  float v[32], waux[32];
  const float max = bq_iq2_prepare(G, x, w, v, waux, signs);
  *scale_out = 0;
  if (max < (G == 1024 ? 1e-8f : 1e-15f)) return 0;
  int8_t L[32] = {0}, Laux[32];
  float best = 0, scale, from;
  int nis;
  if (xxs) {
    scale = bq_make_qp_quants(32, KMAXQ + 1, v, (uint8_t *)L, w);
    from = bq_mul(scale, (float)KMAXQ); /* eff_max */
    if (from <= 0) return 0;
    nis = 6;
  } else {
    scale = bq_div(max, (float)(2 * KMAXQ - 1));
    from = max;
    nis = 9;
  }
  int on[4], on_aux[4];
  for (int k = 0; k < ng; k++) on[k] = 1;
  for (int is = -nis; is <= nis; is++) {
    const float id = bq_div(2 * KMAXQ - 1 + is * 0.1f, from), this_scale = bq_div(1, id);
    for (int k = 0; k < ng; k++)
      if (group(t, bq_iq2_search__ref, v + 8 * k, waux + 8 * k, id, this_scale, Laux + 8 * k,
                &on_aux[k]) < 0)
        return BQ_EDOMAIN;
    float sumqx, sumq2;
    bq_imat_grid_sums(n, w, v, Laux, &sumqx, &sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      memcpy(L, Laux, (size_t)n);
      memcpy(on, on_aux, sizeof on);
    }
  }
  return bq_iq2_conclude(G, t, bq_iq2_search__ref, v, w, waux, L, on, scale, signs, scale_out, gi);
}

/* The 4-bit code of a sub-block's scale against the super-block's 1/d. */
static inline int scale_code(float id, float scale) {
  const int l = bq_nearest_int(bq_mul(0.5f, bq_sub(bq_mul(id, scale), 1.0f)));
  return l < 0 ? 0 : l > 15 ? 15 : l;
}

void bq_iq2_finish(int G, const int *sub, const float *scales, const uint16_t *gi,
                   const uint8_t *signs, uint8_t *block) {
  const int nsub = G == 256 ? 8 : 16;
  float max_scale = 0;
  for (int ib = 0; ib < nsub; ib++)
    if (sub[ib]) max_scale = max_scale > scales[ib] ? max_scale : scales[ib];
  const float d = max_scale / 31, id = 1 / d;
  if (G == 256) {
    block_iq2_xxs b;
    memset(&b, 0, sizeof b);
    if (max_scale) {
      b.d = bq_fp32_to_fp16(d);
      uint32_t q2[16] = {0};
      for (int ib = 0; ib < 8; ib++) {
        if (sub[ib])
          for (int k = 0; k < 4; k++) {
            q2[2 * ib] |= (uint32_t)gi[4 * ib + k] << 8 * k;
            q2[2 * ib + 1] |= (uint32_t)signs[4 * ib + k] << 7 * k;
          }
        q2[2 * ib + 1] |= (uint32_t)scale_code(id, scales[ib]) << 28;
      }
      memcpy(b.qs, q2, sizeof q2);
    }
    memcpy(block, &b, sizeof b);
    return;
  }
  if (G == 512) {
    block_iq2_xs b;
    memset(&b, 0, sizeof b);
    if (max_scale) {
      b.d = bq_fp32_to_fp16(d);
      for (int ib = 0; ib < 16; ib++) {
        if (sub[ib])
          for (int k = 0; k < 2; k++)
            b.qs[2 * ib + k] = (uint16_t)(gi[2 * ib + k] | signs[2 * ib + k] << 9);
        b.scales[ib / 2] |= (uint8_t)(scale_code(id, scales[ib]) << 4 * (ib % 2));
      }
    }
    memcpy(block, &b, sizeof b);
    return;
  }
  /* IQ2_S writes a sub-block's indices and signs as it goes, so they stay when no scale is
   * positive; d and the scales only then. */
  block_iq2_s b;
  memset(&b, 0, sizeof b);
  for (int ib = 0; ib < 16; ib++) {
    if (!sub[ib]) continue;
    for (int k = 0; k < 2; k++) {
      const int i8 = 2 * ib + k;
      b.qs[i8] = (uint8_t)(gi[i8] & 255);
      b.qh[i8 / 4] |= (uint8_t)((gi[i8] >> 8) << 2 * (i8 % 4));
      b.signs[i8] = signs[i8];
    }
  }
  if (max_scale) {
    b.d = bq_fp32_to_fp16(d * 0.9875f);
    for (int ib = 0; ib < 16; ib++)
      b.scales[ib / 2] |= (uint8_t)(scale_code(id, scales[ib]) << 4 * (ib % 2));
  }
  memcpy(block, &b, sizeof b);
}

float bq_iq2_sigma2(int G, const float *x) {
  float s = 0;
  for (int i = 0; i < QK_K; i++) s += x[i] * x[i];
  return G == 1024 ? 2 * s / QK_K : s / QK_K;
}

void bq_iq2_weights(int G, const float *x, const float *qw, float sigma2, float *w) {
  const int n = G == 256 ? 32 : 16;
  for (int i = 0; i < n; i++)
    w[i] = qw ? qw[i] * sqrtf(sigma2 + x[i] * x[i]) : 0.25f * sigma2 + x[i] * x[i];
}

int bq_iq2_quantize_rows(int G, bq_iq2_subblock_fn *subblock, const float *x, void *y, size_t rows,
                         size_t cols, const float *qw) {
  if (cols % QK_K || (!qw && G != 1024)) return BQ_EINVAL;
  bq_iq2_tables t;
  if (!bq_iq2_tables_of(G, &t)) return BQ_ENOTABLES;
  const int n = G == 256 ? 32 : 16, nsub = QK_K / n;
  const size_t bytes = G == 256   ? sizeof(block_iq2_xxs)
                       : G == 512 ? sizeof(block_iq2_xs)
                                  : sizeof(block_iq2_s);
  for (size_t r = 0; r < rows; r++)
    for (size_t ibl = 0; ibl < cols / QK_K; ibl++) {
      const float *xb = x + r * cols + QK_K * ibl;
      const float sigma2 = bq_iq2_sigma2(G, xb);
      int sub[16];
      float scales[16];
      uint16_t gi[32] = {0};
      uint8_t signs[32] = {0};
      for (int ib = 0; ib < nsub; ib++) {
        float w[32];
        bq_iq2_weights(G, xb + n * ib, qw ? qw + QK_K * ibl + n * ib : NULL, sigma2, w);
        const int ng = n / 8;
        sub[ib] = subblock(G, &t, xb + n * ib, w, &scales[ib], gi + ng * ib, signs + ng * ib);
        if (sub[ib] < 0) return sub[ib];
      }
      bq_iq2_finish(G, sub, scales, gi, signs, (uint8_t *)y + (r * (cols / QK_K) + ibl) * bytes);
    }
  return BQ_OK;
}

BQ_QUANTIZE_ROWS_PROTO(iq2_xxs, __ref) {
  return bq_iq2_quantize_rows(256, bq_iq2_subblock__ref, x, y, rows, cols, qw);
}

BQ_QUANTIZE_ROWS_PROTO(iq2_xs, __ref) {
  return bq_iq2_quantize_rows(512, bq_iq2_subblock__ref, x, y, rows, cols, qw);
}

BQ_QUANTIZE_ROWS_PROTO(iq2_s, __ref) {
  return bq_iq2_quantize_rows(1024, bq_iq2_subblock__ref, x, y, rows, cols, qw);
}
