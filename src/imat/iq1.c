/* IQ1_S and IQ1_M quantizers: ggml's quantize_iq1_s (quantize_row_iq1_s_impl, importance weights
 * required) and quantize_iq1_m (quantize_row_iq1_m_impl, with weights or without: then x^2), on
 * the 2048-point grid of codes {0, 1, 2}^8.
 *
 * Per super-block of 256: sigma2 = 2 * sum x^2 / 256 and per element a weight, qw * sqrt(sigma2 +
 * x^2) (IQ1_M without weights: x^2). Per sub-block (IQ1_S: 32 values, IQ1_M: 16), unless its
 * largest magnitude is below 1e-12 (IQ1_S) or 1e-7 (IQ1_M): the values sorted, and every split of
 * the sorted order into codes 0 | 1 | 2 tried with the code values -1, 0, 1 shifted by +-1/8
 * (IQ1_S: one shift per sub-block; IQ1_M: one per group of 8), scoring sumqx^2 / sumq2 (the first
 * best wins). A negative best scale is flipped (codes 2 - L, shifts negated). Each group of 8 codes
 * off the grid moves to the neighbour of least weighted squared error at that scale
 * (iq1_find_best_neighbour2), and then the scale is refitted. The super-block stores d =
 * max scale / 15 (IQ1_S: as fp16 times 1.125) and 3-bit scales nearest_int((scale / d - 1) / 2);
 * IQ1_M then refits d over all its codes and scales and stores it times 1.1125 as fp16, spread
 * over the top nibbles of its four scale words.
 *
 * Where ggml aborts (a neighbour search that finds no distance below FLT_MAX: NaN, Inf or
 * overflowing values; a NaN scale), the kernels return BQ_EDOMAIN. NaN bits reach the bytes only
 * through the scale codes (nearest_int of a NaN when d is Inf) and IQ1_M's refitted d (Inf - Inf,
 * Inf / Inf); those steps use fp.h's arithmetic. Everything else only compares. */
#include "iq1.h"

#include <float.h>

const float bq_iq1_xp[3] = {-1 + 0.125f, 0.125f, 1 + 0.125f};
const float bq_iq1_xm[3] = {-1 - 0.125f, -0.125f, 1 - 0.125f};

#define MAX(a, b) ((a) > (b) ? (a) : (b)) /* ggml's: the second operand when either is NaN */

typedef struct {
  float v;
  int i;
} pair;

/* glibc's msort_with_tmp: sort halves n / 2 and n - n / 2, merge taking the left on cmp <= 0. */
static void merge_sort(pair *b, int n, pair *tmp) {
  if (n <= 1) return;
  int n1 = n / 2, n2 = n - n1;
  pair *b1 = b, *b2 = b + n1, *t = tmp;
  merge_sort(b1, n1, tmp);
  merge_sort(b2, n2, tmp);
  while (n1 > 0 && n2 > 0) {
    /* iq1_sort_helper(b1, b2) <= 0, i.e. not b1 > b2 */
    if (!(b1->v > b2->v)) {
      *t++ = *b1++;
      n1--;
    } else {
      *t++ = *b2++;
      n2--;
    }
  }
  if (n1 > 0) memcpy(t, b1, (size_t)n1 * sizeof *t);
  memcpy(b, tmp, (size_t)(n - n2) * sizeof *b);
}

void bq_iq1_sort(const float *x, int n, int *perm) {
  pair p[BQ_IQ1S_BLOCK], tmp[BQ_IQ1S_BLOCK];
  for (int j = 0; j < n; j++) p[j] = (pair){x[j], j};
  merge_sort(p, n, tmp);
  for (int j = 0; j < n; j++) perm[j] = p[j].i;
}

int bq_iq1_search__ref(const bq_iq2_tables *t, int u, const float *xval, const float *w, float s,
                       const float *xg, int8_t *L) {
  const uint16_t *nb = t->neighbours - t->map[u] - 1;
  float best = FLT_MAX;
  int gi = -1;
  for (int j = 1; j <= nb[0]; j++) {
    const uint64_t g = t->grid[nb[j]];
    float d2 = 0;
    for (int i = 0; i < 8; i++) {
      const float diff = s * xg[((int)(g >> 8 * i & 0xFF) - 1) / 2] - xval[i];
      d2 += w[i] * diff * diff;
    }
    if (d2 < best) {
      best = d2;
      gi = nb[j];
    }
  }
  if (gi < 0) return -1;
  for (int i = 0; i < 8; i++) L[i] = (int8_t)(((int)(t->grid[gi] >> 8 * i & 0xFF) - 1) / 2);
  return gi;
}

/* The grid point index u of 8 codes. */
static inline int point(const int8_t *L) {
  int u = 0;
  for (int j = 0; j < 8; j++) u |= L[j] << 2 * j;
  return u;
}

/* The code 0..2 of element j of grid point g. */
static inline int code(uint64_t g, int j) { return ((int)(g >> 8 * j & 0xFF) - 1) / 2; }

/* Moves the n / 8 groups of codes L onto the grid at scale s (group k with the code values
 * xg[k]), their indices into index; returns 1 when all were on it, 0 when some moved, -1 where
 * ggml aborts. */
static int on_grid(const bq_iq1_kernels *k, const bq_iq2_tables *t, int n, const float *xb,
                   const float *w, float s, const float *const *xg, int8_t *L, uint16_t *index) {
  int all = 1;
  for (int g = 0; g < n / 8; g++) {
    const int u = point(L + 8 * g);
    int gi = t->map[u];
    if (gi < 0) {
      all = 0;
      gi = k->search(t, u, xb + 8 * g, w + 8 * g, s, xg[g], L + 8 * g);
      if (gi < 0) return -1;
    }
    index[g] = (uint16_t)gi;
  }
  return all;
}

/* The scale refitted to the grid points index: sumqx / sumq2 when both are positive, else s. */
static float refit(const bq_iq2_tables *t, int n, const float *xb, const float *w,
                   const float *const *xg, const uint16_t *index, float s) {
  float sumqx = 0, sumq2 = 0;
  for (int g = 0; g < n / 8; g++)
    for (int j = 0; j < 8; j++) {
      const float wj = w[8 * g + j], q = xg[g][code(t->grid[index[g]], j)];
      sumqx += wj * q * xb[8 * g + j];
      sumq2 += wj * q * q;
    }
  return sumqx > 0 && sumq2 > 0 ? sumqx / sumq2 : s;
}

/* The codes of a split: sorted positions below i1 take 0, below i2 1, the rest 2. */
static void codes_of_split(const int *perm, int n, int i1, int i2, int8_t *L) {
  for (int j = 0; j < n; j++) L[perm[j]] = (int8_t)(j < i1 ? 0 : j < i2 ? 1 : 2);
}

/* sigma2 of a super-block, 2 * sum x^2 / 256 in element order. */
static float sigma2_of(const float *x) {
  float s = 0;
  for (int i = 0; i < QK_K; i++) s += x[i] * x[i];
  return 2 * s / QK_K;
}

/* The largest magnitude as ggml's MAX scan finds it (only compared with the threshold). */
static float max_abs(const float *x, int n) {
  float m = fabsf(x[0]);
  for (int i = 1; i < n; i++) m = MAX(m, fabsf(x[i]));
  return m;
}

/* The 3-bit code of a sub-block's scale against the super-block's 1/d. */
static inline int scale_code(float id, float scale) {
  const int l = bq_nearest_int(bq_mul(0.5f, bq_sub(bq_mul(id, scale), 1.0f)));
  return l < 0 ? 0 : l > 7 ? 7 : l;
}

/* ---- IQ1_S ---- */

void bq_iq1s_split__ref(const float *sumx, const float *sumw, int *besti1, int *besti2, int *shift,
                        float *scale) {
  enum { N = BQ_IQ1S_BLOCK };
  float best = -FLT_MAX;
  for (int i1 = 0; i1 <= N; i1++)
    for (int i2 = i1; i2 <= N; i2++)
      for (int sign = 1; sign >= -1; sign -= 2) {
        const float *c = sign == 1 ? bq_iq1_xp : bq_iq1_xm;
        const float sumqx = (sumx[i1] - sumx[0]) * c[0] + (sumx[i2] - sumx[i1]) * c[1] +
                            (sumx[N] - sumx[i2]) * c[2];
        const float sumq2 = (sumw[i1] - sumw[0]) * c[0] * c[0] +
                            (sumw[i2] - sumw[i1]) * c[1] * c[1] +
                            (sumw[N] - sumw[i2]) * c[2] * c[2];
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
          *scale = sumqx / sumq2;
          best = *scale * sumqx;
          *besti1 = i1;
          *besti2 = i2;
          *shift = sign;
        }
      }
}

/* One sub-block of 32: its scale (>= 0; 0 when skipped), shift (+1 or -1) and 4 grid indices.
 * Returns 1, 0 when skipped (indices untouched), or BQ_EDOMAIN. */
static int subblock_s(const bq_iq1_kernels *k, const bq_iq2_tables *t, const float *xb,
                      const float *w, float *scale_out, int *shift_out, uint16_t *index) {
  enum { N = BQ_IQ1S_BLOCK };
  *scale_out = 0;
  *shift_out = 1;
  const float max = max_abs(xb, N);
  if (max < 1e-12f) return 0;
  int perm[N];
  bq_iq1_sort(xb, N, perm);
  float sumx[N + 4] = {0}, sumw[N + 4] = {0}; /* 3 past the end for SIMD128 loads */
  for (int j = 0; j < N; j++) {
    const int i = perm[j];
    sumx[j + 1] = sumx[j] + w[i] * xb[i];
    sumw[j + 1] = sumw[j] + w[i];
  }
  float scale = max;
  int besti1 = -1, besti2 = -1, shift = 0;
  k->split_s(sumx, sumw, &besti1, &besti2, &shift, &scale);
  if (besti1 < 0 || besti2 < 0 || shift == 0) return 0;
  int8_t L[N];
  codes_of_split(perm, N, besti1, besti2, L);
  if (scale < 0) {
    for (int j = 0; j < N; j++) L[j] = (int8_t)(2 - L[j]);
    scale = -scale;
    shift = -shift;
  }
  const float *xx = shift == 1 ? bq_iq1_xp : bq_iq1_xm;
  const float *const xg[4] = {xx, xx, xx, xx};
  const int all = on_grid(k, t, N, xb, w, scale, xg, L, index);
  if (all < 0) return BQ_EDOMAIN;
  if (!all) scale = refit(t, N, xb, w, xg, index, scale);
  if (!(scale >= 0)) return BQ_EDOMAIN; /* GGML_ASSERT(scale >= 0): a NaN scale */
  *scale_out = scale;
  *shift_out = shift;
  return 1;
}

static int superblock_s(const bq_iq1_kernels *k, const bq_iq2_tables *t, const float *x,
                        const float *qw, block_iq1_s *b) {
  memset(b, 0, sizeof *b);
  const float sigma2 = sigma2_of(x);
  float scales[8], max_scale = 0;
  int shifts[8];
  for (int ib = 0; ib < 8; ib++) {
    const float *xb = x + BQ_IQ1S_BLOCK * ib;
    float w[BQ_IQ1S_BLOCK];
    for (int i = 0; i < BQ_IQ1S_BLOCK; i++)
      w[i] = qw[BQ_IQ1S_BLOCK * ib + i] * sqrtf(sigma2 + xb[i] * xb[i]);
    uint16_t index[4];
    const int r = subblock_s(k, t, xb, w, &scales[ib], &shifts[ib], index);
    if (r < 0) return r;
    if (!r) continue;
    uint16_t h = 0;
    for (int g = 0; g < 4; g++) {
      b->qs[4 * ib + g] = (uint8_t)(index[g] & 255);
      h |= (uint16_t)((index[g] >> 8) << 3 * g);
    }
    b->qh[ib] = h;
    max_scale = MAX(max_scale, scales[ib]);
  }
  if (!max_scale) return BQ_OK;
  const float d = max_scale / 15, id = 1 / d;
  b->d = bq_fp32_to_fp16(d * 1.125f);
  for (int ib = 0; ib < 8; ib++) {
    int l = scale_code(id, scales[ib]);
    if (shifts[ib] == -1) l |= 8;
    b->qh[ib] |= (uint16_t)(l << 12);
  }
  return BQ_OK;
}

/* ---- IQ1_M ---- */

void bq_iq1m_split__ref(const float *xb, const float *w, const int *perm, int *besti1, int *besti2,
                        int *bestk, float *scale) {
  enum { N = BQ_IQ1M_BLOCK };
  float best = -FLT_MAX;
  for (int i1 = 0; i1 <= N; i1++)
    for (int i2 = i1; i2 <= N; i2++) {
      float sumqx[4] = {0}, sumq2[4] = {0};
      for (int j = 0; j < N; j++) {
        const int i = perm[j], p = j < i1 ? 0 : j < i2 ? 1 : 2;
        for (int k = 0; k < 4; k++) {
          /* k's bit 1 is the first group's shift, bit 0 the second's (set: minus) */
          const float c = ((i < N / 2 ? k >> 1 : k & 1) ? bq_iq1_xm : bq_iq1_xp)[p];
          sumqx[k] += w[i] * c * xb[i];
          sumq2[k] += w[i] * c * c;
        }
      }
      for (int k = 0; k < 4; k++)
        if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best * sumq2[k]) {
          *scale = sumqx[k] / sumq2[k];
          best = *scale * sumqx[k];
          *besti1 = i1;
          *besti2 = i2;
          *bestk = k;
        }
    }
}

/* The code values of IQ1_M's group g (0, 1) under shift choice k. */
static inline const float *xg_m(int k, int g) {
  return (g == 0 ? k >> 1 : k & 1) ? bq_iq1_xm : bq_iq1_xp;
}

/* One sub-block of 16: scale, shift choice 0..3 and 2 grid indices, as subblock_s. */
static int subblock_m(const bq_iq1_kernels *k, const bq_iq2_tables *t, const float *xb,
                      const float *w, float *scale_out, int *shift_out, uint16_t *index) {
  enum { N = BQ_IQ1M_BLOCK };
  *scale_out = 0;
  *shift_out = 0;
  const float max = max_abs(xb, N);
  if (max < 1e-7f) return 0;
  int perm[N];
  bq_iq1_sort(xb, N, perm);
  float scale = max;
  int besti1 = -1, besti2 = -1, bestk = -1;
  k->split_m(xb, w, perm, &besti1, &besti2, &bestk, &scale);
  if (besti1 < 0 || besti2 < 0 || bestk < 0) return 0;
  int8_t L[N];
  codes_of_split(perm, N, besti1, besti2, L);
  if (scale < 0) {
    for (int j = 0; j < N; j++) L[j] = (int8_t)(2 - L[j]);
    scale = -scale;
    bestk = 3 - bestk;
  }
  const float *const xg[2] = {xg_m(bestk, 0), xg_m(bestk, 1)};
  const int all = on_grid(k, t, N, xb, w, scale, xg, L, index);
  if (all < 0) return BQ_EDOMAIN;
  if (!all) scale = refit(t, N, xb, w, xg, index, scale);
  if (!(scale >= 0)) return BQ_EDOMAIN; /* GGML_ASSERT(scale >= 0) */
  *scale_out = scale;
  *shift_out = bestk;
  return 1;
}

static void weights_m(const float *xb, const float *qw, float sigma2, float *w) {
  for (int i = 0; i < BQ_IQ1M_BLOCK; i++)
    w[i] = qw ? qw[i] * sqrtf(sigma2 + xb[i] * xb[i]) : xb[i] * xb[i];
}

static int superblock_m(const bq_iq1_kernels *k, const bq_iq2_tables *t, const float *x,
                        const float *qw, block_iq1_m *b) {
  enum { N = BQ_IQ1M_BLOCK, NB = QK_K / BQ_IQ1M_BLOCK };
  static const uint8_t masks[4] = {0x00, 0x80, 0x08, 0x88};
  memset(b, 0, sizeof *b);
  const float sigma2 = sigma2_of(x);
  float scales[NB], max_scale = 0;
  int shifts[NB];
  for (int ib = 0; ib < NB; ib++) {
    const float *xb = x + N * ib;
    float w[N];
    weights_m(xb, qw ? qw + N * ib : NULL, sigma2, w);
    uint16_t index[2];
    const int r = subblock_m(k, t, xb, w, &scales[ib], &shifts[ib], index);
    if (r < 0) return r;
    if (!r) continue;
    b->qs[2 * ib] = (uint8_t)(index[0] & 255);
    b->qs[2 * ib + 1] = (uint8_t)(index[1] & 255);
    b->qh[ib] = (uint8_t)((index[0] >> 8) | ((index[1] >> 8) << 4));
    max_scale = MAX(max_scale, scales[ib]);
  }
  if (!max_scale) return BQ_OK;
  uint16_t sc[4] = {0};
  float d = max_scale / 15;
  const float id = 1 / d;
  /* The refit of d over every sub-block, skipped ones included (grid point 0, shift choice 0):
   * Inf values can make its sums NaN, whose bits the fp16 d keeps. */
  float sumqx = 0, sumq2 = 0;
  for (int ib = 0; ib < NB; ib++) {
    const int l = scale_code(id, scales[ib]);
    sc[ib / 4] |= (uint16_t)(l << 3 * (ib % 4));
    b->qh[ib] |= masks[shifts[ib]];
    const float *xb = x + N * ib;
    float w[N];
    weights_m(xb, qw ? qw + N * ib : NULL, sigma2, w);
    for (int g = 0; g < 2; g++) {
      const float *xx = xg_m(shifts[ib], g);
      const uint64_t pg = t->grid[b->qs[2 * ib + g] + ((b->qh[ib] << (8 - 4 * g)) & 0x700)];
      for (int j = 0; j < 8; j++) {
        const float q = xx[code(pg, j)] * (float)(2 * l + 1), wq = bq_mul(w[8 * g + j], q);
        sumqx = bq_add(sumqx, bq_mul(wq, xb[8 * g + j]));
        sumq2 = bq_add(sumq2, bq_mul(wq, q));
      }
    }
  }
  if (sumq2 > 0) d = bq_div(sumqx, sumq2);
  const uint16_t s = bq_fp32_to_fp16(bq_mul(d, 1.1125f));
  sc[0] |= (uint16_t)((s & 0x000f) << 12);
  sc[1] |= (uint16_t)((s & 0x00f0) << 8);
  sc[2] |= (uint16_t)((s & 0x0f00) << 4);
  sc[3] |= (uint16_t)(s & 0xf000);
  memcpy(b->scales, sc, sizeof sc);
  return BQ_OK;
}

/* ---- rows ---- */

int bq_iq1_s_rows(const bq_iq1_kernels *k, const float *x, void *y, size_t rows, size_t cols,
                  const float *qw) {
  if (cols % QK_K || !qw) return BQ_EINVAL;
  bq_iq2_tables t;
  if (!bq_iq2_tables_of(BQ_IQ1_GRID, &t)) return BQ_ENOTABLES;
  const size_t nb = cols / QK_K;
  for (size_t r = 0; r < rows; r++)
    for (size_t ibl = 0; ibl < nb; ibl++) {
      block_iq1_s b;
      const int s = superblock_s(k, &t, x + r * cols + QK_K * ibl, qw + QK_K * ibl, &b);
      if (s < 0) return s;
      memcpy((block_iq1_s *)y + r * nb + ibl, &b, sizeof b);
    }
  return BQ_OK;
}

int bq_iq1_m_rows(const bq_iq1_kernels *k, const float *x, void *y, size_t rows, size_t cols,
                  const float *qw) {
  if (cols % QK_K) return BQ_EINVAL;
  bq_iq2_tables t;
  if (!bq_iq2_tables_of(BQ_IQ1_GRID, &t)) return BQ_ENOTABLES;
  const size_t nb = cols / QK_K;
  for (size_t r = 0; r < rows; r++)
    for (size_t ibl = 0; ibl < nb; ibl++) {
      block_iq1_m b;
      const int s = superblock_m(k, &t, x + r * cols + QK_K * ibl, qw ? qw + QK_K * ibl : NULL, &b);
      if (s < 0) return s;
      memcpy((block_iq1_m *)y + r * nb + ibl, &b, sizeof b);
    }
  return BQ_OK;
}

static const bq_iq1_kernels ref = {bq_iq1_search__ref, bq_iq1s_split__ref, bq_iq1m_split__ref};

BQ_QUANTIZE_ROWS_PROTO(iq1_s, __ref) { return bq_iq1_s_rows(&ref, x, y, rows, cols, qw); }

BQ_QUANTIZE_ROWS_PROTO(iq1_m, __ref) { return bq_iq1_m_rows(&ref, x, y, rows, cols, qw); }
