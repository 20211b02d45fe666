/* IQ3_XXS and IQ3_S quantizers: ggml's quantize_iq3_xxs (quantize_row_iq3_xxs_impl with the 256
 * grid) and quantize_iq3_s (quantize_row_iq3_s_impl, 512 grid), with importance weights or
 * without (ggml takes NULL for both: weights x^2).
 *
 * Per super-block of 256: sigma2 = 2 * sum x^2 / 256 and per element a weight, x^2 or
 * qw * sqrt(sigma2 + x^2). Per sub-block of 32, in groups of 8 sharing a sign byte: magnitudes
 * |x| (IQ3_XXS keeps an even number of negative signs per group, flipping the element of least
 * w * x^2). Sub-blocks whose largest magnitude is below 1e-8 (IQ3_XXS) or 0 (IQ3_S) are skipped.
 * Otherwise trial scales 1 / id, id = (15 + 0.2 is) / max for is = -15..15 (IQ3_XXS) or -9..9
 * (IQ3_S): each group of 4 magnitudes takes codes c = clamp(nearest_int((id * |x| - 1) / 2), 0, 7);
 * if that point is off the grid, the neighbour of least sum sqrt(w) (scale (2c + 1) - |x|)^2 in its
 * list (iq3_find_best_neighbour); the trial whose codes give the largest sumqx^2 / sumq2 wins (the
 * first on ties). Then the groups still off the grid (IQ3_XXS) or all groups (IQ3_S) are re-coded
 * at the winning scale, which is refitted. The super-block stores d = max scale / 31 (times a
 * fudge, 1.0125 or 1.033) and 4-bit scales nearest_int((scale / d - 1) / 2).
 *
 * Where ggml aborts (a neighbour search that finds no distance below FLT_MAX: NaN or overflowing
 * weights; a NaN scale), the kernels return BQ_EDOMAIN. NaN bits reach the bytes in one place:
 * a NaN magnitude's payload becomes its code through nearest_int, which the fp.h arithmetic keeps
 * as x86-64 does. */
#include "iq3.h"

#include <float.h>

float bq_iq3_sigma2(const float *x) {
  float s = 0;
  for (int i = 0; i < QK_K; i++) s += x[i] * x[i];
  return 2 * s / QK_K;
}

void bq_iq3_weights(const float *x, const float *qw, float sigma2, float *w) {
  for (int i = 0; i < 32; i++) w[i] = qw ? qw[i] * sqrtf(sigma2 + x[i] * x[i]) : x[i] * x[i];
}

int bq_iq3_search__ref(const bq_iq3_tables *t, int u, const float *v, const float *waux, float s,
                       int8_t *L) {
  const uint16_t *nb = t->neighbours - t->map[u] - 1;
  float best = FLT_MAX;
  int gi = -1;
  for (int j = 1; j <= nb[0]; j++) {
    const uint32_t g = t->grid[nb[j]];
    float d2 = 0;
    for (int i = 0; i < 4; i++) {
      const float diff = s * (float)(g >> 8 * i & 0xFF) - v[i];
      d2 += waux[i] * diff * diff;
    }
    if (d2 < best) {
      best = d2;
      gi = nb[j];
    }
  }
  if (gi >= 0) bq_iq3_codes_of(t->grid[gi], L);
  return gi;
}

/* Codes of the group of 4 magnitudes v at inverse scale id, moved onto the grid (the neighbour
 * nearest at scale s when off it). Returns the grid index (-1: ggml aborts) and whether the codes
 * were on the grid. */
static int group(const bq_iq3_tables *t, bq_iq3_search_fn *search, const float *v,
                 const float *waux, float id, float s, int8_t *L, int *on_grid) {
  for (int i = 0; i < 4; i++) L[i] = (int8_t)bq_iq3_code(id, v[i]);
  const int u = bq_iq3_point(L);
  *on_grid = t->map[u] >= 0;
  if (*on_grid) return t->map[u];
  return search(t, u, v, waux, s, L);
}

float bq_iq3_prepare(int G, const float *x, const float *w, float *v, float *waux, uint8_t *signs) {
  const int xxs = G == 256;
  for (int i = 0; i < 32; i++) waux[i] = sqrtf(w[i]);
  for (int k = 0; k < 4; k++) signs[k] = bq_imat_signs8(x + 8 * k, w + 8 * k, v + 8 * k, xxs);
  float max = v[0];
  for (int i = 1; i < 32; i++) max = max > v[i] ? max : v[i];
  return max;
}

int bq_iq3_conclude(int G, const bq_iq3_tables *t, bq_iq3_search_fn *search, const float *v,
                    const float *w, const float *waux, int8_t *L, const int *on, float scale,
                    uint8_t *signs, float *scale_out, uint16_t *gi) {
  const int xxs = G == 256;
  int off = 0;
  for (int k = 0; k < 8; k++) off += !on[k];
  if (off > 0 && scale > 0) {
    const float id = 1 / scale;
    for (int k = 0; k < 8; k++) {
      if (xxs && on[k]) continue;
      int on_grid;
      if (group(t, search, v + 4 * k, waux + 4 * k, id, scale, L + 4 * k, &on_grid) < 0)
        return BQ_EDOMAIN;
    }
    float sumqx, sumq2;
    bq_imat_grid_sums(32, w, v, L, &sumqx, &sumq2);
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  if (scale < 0) {
    scale = -scale;
    for (int k = 0; k < 4; k++) signs[k] = (uint8_t)(xxs ? ~signs[k] & 127 : ~signs[k]);
  }
  for (int k = 0; k < 8; k++) {
    const int g = t->map[bq_iq3_point(L + 4 * k)];
    if (g < 0) return BQ_EDOMAIN; /* ggml: "Oops: found point not on grid" (never reached) */
    gi[k] = (uint16_t)g;
  }
  if (!(scale >= 0)) return BQ_EDOMAIN; /* GGML_ASSERT(scale >= 0): a NaN scale */
  *scale_out = scale;
  return 1;
}

int bq_iq3_subblock__ref(int G, const bq_iq3_tables *t, const float *x, const float *w,
                         float *scale_out, uint16_t *gi, uint8_t *signs) {
  const int xxs = G == 256;
  float v[32], waux[32];
  const float max = bq_iq3_prepare(G, x, w, v, waux, signs);
  if (xxs ? max < 1e-8f : !max) {
    *scale_out = 0;
    return 0;
  }
  const int nis = xxs ? 15 : 9;
  int8_t L[32] = {0}, Laux[32];
  float best = 0, scale = max / (2 * BQ_IQ3_KMAXQ - 1);
  int on[8], on_aux[8];
  for (int k = 0; k < 8; k++) on[k] = xxs;
  for (int is = -nis; is <= nis; is++) {
    const float id = (2 * BQ_IQ3_KMAXQ - 1 + is * 0.2f) / max, this_scale = 1 / id;
    for (int k = 0; k < 8; k++)
      if (group(t, bq_iq3_search__ref, v + 4 * k, waux + 4 * k, id, this_scale, Laux + 4 * k,
                &on_aux[k]) < 0)
        return BQ_EDOMAIN;
    float sumqx, sumq2;
    bq_imat_grid_sums(32, w, v, Laux, &sumqx, &sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      memcpy(L, Laux, sizeof L);
      memcpy(on, on_aux, sizeof on);
    }
  }
  return bq_iq3_conclude(G, t, bq_iq3_search__ref, v, w, waux, L, on, scale, signs, scale_out, gi);
}

/* The 4-bit code of a sub-block's scale against the super-block's 1/d. */
static inline int scale_code(float id, float scale) {
  const int l = bq_nearest_int(bq_mul(0.5f, bq_sub(bq_mul(id, scale), 1.0f)));
  return l < 0 ? 0 : l > 15 ? 15 : l;
}

void bq_iq3_finish(int G, const int *sub, const float *scales, const uint16_t *gi,
                   const uint8_t *signs, uint8_t *block) {
  float max_scale = 0;
  for (int ib = 0; ib < 8; ib++)
    if (sub[ib]) max_scale = max_scale > scales[ib] ? max_scale : scales[ib];
  const float d = max_scale / 31, id = 1 / d;
  if (G == 256) {
    block_iq3_xxs b;
    memset(&b, 0, sizeof b);
    if (max_scale) {
      b.d = bq_fp32_to_fp16(d * 1.0125f);
      for (int ib = 0; ib < 8; ib++) {
        uint32_t ss = 0;
        if (sub[ib]) {
          for (int k = 0; k < 8; k++) b.qs[8 * ib + k] = (uint8_t)gi[8 * ib + k];
          for (int k = 0; k < 4; k++) ss |= (uint32_t)signs[4 * ib + k] << 7 * k;
        }
        ss |= (uint32_t)scale_code(id, scales[ib]) << 28;
        memcpy(b.qs + 64 + 4 * ib, &ss, 4);
      }
    }
    memcpy(block, &b, sizeof b);
    return;
  }
  block_iq3_s b;
  memset(&b, 0, sizeof b);
  /* ggml advances its qs and signs pointers only past the sub-blocks it does not skip, so each
   * sub-block's bytes land after those of the previous unskipped one; qh and the scales are placed
   * by the sub-block's own index. */
  int at = 0;
  for (int ib = 0; ib < 8; ib++) {
    if (!sub[ib]) continue;
    for (int k = 0; k < 8; k++) {
      b.qs[8 * at + k] = (uint8_t)(gi[8 * ib + k] & 255);
      b.qh[ib] |= (uint8_t)((gi[8 * ib + k] >> 8) << k);
    }
    memcpy(b.signs + 4 * at, signs + 4 * ib, 4);
    at++;
  }
  if (max_scale) {
    b.d = bq_fp32_to_fp16(d * 1.033f);
    for (int ib = 0; ib < 8; ib += 2)
      b.scales[ib / 2] =
          (uint8_t)(scale_code(id, scales[ib]) | scale_code(id, scales[ib + 1]) << 4);
  }
  memcpy(block, &b, sizeof b);
}

int bq_iq3_quantize_rows(int G, bq_iq3_subblock_fn *subblock, const float *x, void *y, size_t rows,
                         size_t cols, const float *qw) {
  if (cols % QK_K) return BQ_EINVAL;
  bq_iq3_tables t;
  if (!bq_iq3_tables_of(G, &t)) return BQ_ENOTABLES;
  const size_t bytes = G == 256 ? sizeof(block_iq3_xxs) : sizeof(block_iq3_s);
  for (size_t r = 0; r < rows; r++)
    for (size_t ibl = 0; ibl < cols / QK_K; ibl++) {
      const float *xb = x + r * cols + QK_K * ibl;
      const float sigma2 = qw ? bq_iq3_sigma2(xb) : 0.0f;
      int sub[8];
      float scales[8];
      uint16_t gi[64] = {0};
      uint8_t signs[32] = {0};
      for (int ib = 0; ib < 8; ib++) {
        float w[32];
        bq_iq3_weights(xb + 32 * ib, qw ? qw + QK_K * ibl + 32 * ib : NULL, sigma2, w);
        sub[ib] = subblock(G, &t, xb + 32 * ib, w, &scales[ib], gi + 8 * ib, signs + 4 * ib);
        if (sub[ib] < 0) return sub[ib];
      }
      bq_iq3_finish(G, sub, scales, gi, signs, (uint8_t *)y + (r * (cols / QK_K) + ibl) * bytes);
    }
  return BQ_OK;
}

BQ_QUANTIZE_ROWS_PROTO(iq3_xxs, __ref) {
  return bq_iq3_quantize_rows(256, bq_iq3_subblock__ref, x, y, rows, cols, qw);
}

BQ_QUANTIZE_ROWS_PROTO(iq3_s, __ref) {
  return bq_iq3_quantize_rows(512, bq_iq3_subblock__ref, x, y, rows, cols, qw);
}
