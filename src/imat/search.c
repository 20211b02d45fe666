/* The steps the weighted quantizers share (imat.h): sums in ggml's order, the importance weights,
 * ggml's make_qp_quants, and the row loops. The affine and symmetric fits they share with the
 * unweighted K-quants are in src/ref/kquants.c. */
#include "imat.h"

float bq_imat_sum_x2(const float *x, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; i++) {
    const float x2 = bq_mul(x[i], x[i]);
    s = i % 4 == 1 || i % 4 == 2 ? bq_add(x2, s) : bq_add(s, x2);
  }
  return s;
}

float bq_imat_sum(const float *w, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s = bq_add(s, w[i]);
  return s;
}

void bq_imat_weights(const float *qw, const float *x, int n, float sigma2, float *w) {
  for (int i = 0; i < n; i++) w[i] = bq_mul(bq_sqrt(bq_add(bq_mul(x[i], x[i]), sigma2)), qw[i]);
}

#define GROUP_MAX_EPS 1e-15f

static inline int min_nmax(int l, int nmax) { return l < nmax ? l : nmax; }

/* w * diff * diff and w * x * l, ggml's left-to-right products. */
static inline float mul3(float a, float b, float c) { return bq_mul(bq_mul(a, b), c); }

float bq_make_qp_quants(int n, int nmax, const float *x, uint8_t *L, const float *qw) {
  float max = 0;
  for (int i = 0; i < n; i++) max = max > x[i] ? max : x[i]; /* ggml's MAX: a NaN x[i] is taken */
  if (max < GROUP_MAX_EPS) {
    for (int i = 0; i < n; i++) L[i] = 0;
    return 0.0f;
  }
  float iscale = bq_div((float)nmax, max);
  for (int i = 0; i < n; i++) L[i] = (uint8_t)bq_nearest_int(bq_mul(iscale, x[i]));
  /* The errors of the trial scales are only compared (a NaN one loses): plain arithmetic. */
  const float scale = 1 / iscale;
  float best_mse = 0;
  for (int i = 0; i < n; i++) {
    const float diff = x[i] - scale * (float)L[i];
    best_mse += qw[i] * diff * diff;
  }
  for (int is = -4; is <= 4; is++) {
    if (is == 0) continue;
    const float iscale_is = (0.1f * (float)is + (float)nmax) / max;
    const float scale_is = 1 / iscale_is;
    float mse = 0;
    for (int i = 0; i < n; i++) {
      const int l = min_nmax(bq_nearest_int(iscale_is * x[i]), nmax);
      const float diff = x[i] - scale_is * (float)l;
      mse += qw[i] * diff * diff;
    }
    if (mse < best_mse) {
      best_mse = mse;
      iscale = iscale_is;
    }
  }
  /* The first sums take the int codes, the refinement the stored uint8 ones (they differ only
   * for codes out of 0..255, which NaN inputs give). */
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; i++) {
    const int l = min_nmax(bq_nearest_int(bq_mul(iscale, x[i])), nmax);
    L[i] = (uint8_t)l;
    sumlx = bq_add(sumlx, mul3(qw[i], x[i], (float)l));
    suml2 = bq_add(suml2, mul3(qw[i], (float)l, (float)l));
  }
  /* The refinement keeps a change only if comparisons of its sums are true: plain arithmetic. */
  for (int itry = 0; itry < 5; itry++) {
    int n_changed = 0;
    for (int i = 0; i < n; i++) {
      const float w = qw[i], fl = (float)L[i];
      float slx = sumlx - w * x[i] * fl;
      float sl2 = suml2 - w * fl * fl;
      if (slx > 0 && sl2 > 0) {
        const int new_l = min_nmax(bq_nearest_int(x[i] * sl2 / slx), nmax);
        if (new_l != L[i]) {
          slx += w * x[i] * (float)new_l;
          sl2 += w * (float)new_l * (float)new_l;
          if (slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = (uint8_t)new_l;
            sumlx = slx;
            suml2 = sl2;
            n_changed++;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  return suml2 > 0 ? bq_div(sumlx, suml2) : 0.0f;
}

void bq_imat_rows32(const float *x, void *y, size_t rows, size_t cols, const float *qw,
                    size_t bytes, bq_imat_block32 *block) {
  uint8_t *out = y;
  for (size_t r = 0; r < rows; r++, x += cols) {
    const float sigma2 = bq_imat_row_sigma2(x, cols);
    for (size_t i = 0; i < cols / 32; i++, out += bytes)
      block(x + 32 * i, qw + 32 * i, sigma2, out);
  }
}

void bq_imat_rows256(const float *x, void *y, size_t rows, size_t cols, const float *qw,
                     size_t bytes, bq_imat_block256 *block) {
  uint8_t *out = y;
  for (size_t r = 0; r < rows; r++, x += cols)
    for (size_t i = 0; i < cols / QK_K; i++, out += bytes) block(x + QK_K * i, qw + QK_K * i, out);
}

void bq_imat_grid_sums(int n, const float *w, const float *v, const int8_t *L, float *sumqx,
                       float *sumq2) {
  float sx = 0, s2 = 0;
  for (int i = 0; i < n; i++) {
    const float q = (float)(2 * L[i] + 1);
    sx += w[i] * v[i] * q;
    s2 += w[i] * q * q;
  }
  *sumqx = sx;
  *sumq2 = s2;
}

uint8_t bq_imat_signs8(const float *x, const float *w, float *v, int even) {
  int nflip = 0;
  uint8_t s = 0;
  for (int i = 0; i < 8; i++) {
    const float e = x[i];
    v[i] = e >= 0 ? e : -e;
    if (!(e >= 0)) nflip++, s |= (uint8_t)(1 << i);
  }
  if (even && nflip % 2) {
    int imin = 0;
    float min = w[0] * x[0] * x[0];
    for (int i = 1; i < 8; i++) {
      const float ax = w[i] * x[i] * x[i];
      if (ax < min) min = ax, imin = i;
    }
    v[imin] = -v[imin];
    s ^= (uint8_t)(1 << imin);
  }
  return even ? s & 127 : s;
}
