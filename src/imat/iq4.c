/* IQ4_NL and IQ4_XS quantizers: ggml's quantize_iq4_nl and quantize_iq4_xs (both through
 * quantize_row_iq4_nl_impl with ntry = 7), with importance weights or without. These are what
 * ggml_quantize_chunk writes, so the plain kernels bq_iq4_nl_quantize and bq_iq4_xs_quantize are
 * the same code with no weights: for IQ4_NL that is the 7-try scale search with weights x*x, not
 * quantize_row_iq4_nl_ref's single least-squares fit (which no GGUF file holds).
 *
 * Per 32-element sub-block: weights w_j = x_j^2, or qw_j * sqrt(sigma2 + x_j^2) with sigma2
 * twice the mean square of the (super-)block; a start scale -max / kvalues[0] (max: the value of
 * largest magnitude, the first one on a tie) and 15 trial scales (itry + kvalues[0]) / max,
 * itry = -7..7, each giving codes by nearest table entry and the least-squares scale of those
 * codes; the scale whose codes explain the most (sumqx^2 / sumq2) wins, the start on ties. A
 * sub-block with max |x| < 1e-15 (NaN skipped) gets scale 0. IQ4_NL stores that scale as its d
 * and codes of x / d; IQ4_XS stores d = -(the scale of largest magnitude) / 32 and per sub-block a
 * 6-bit l = nearest_int(scale / d) clamped to -32..31, with codes of x / (d * l).
 *
 * NaN: the codes come from comparisons (a NaN code is 15), so only the scales carry NaN bits into
 * the bytes: IQ4_NL's d (fp16 keeps the sign) and IQ4_XS's nearest_int of a NaN scale. The fit
 * computes with fp.h's x86-64 arithmetic, which gives them ggml's bits. */
#include "imat.h"

enum { NTRY = 7 };

void bq_iq4_weights(const float *x, const float *qw, float sigma2, float *w) {
  for (int j = 0; j < 32; j++)
    w[j] = qw ? bq_mul(qw[j], bq_sqrt(bq_add(sigma2, bq_mul(x[j], x[j])))) : bq_mul(x[j], x[j]);
}

float bq_iq4_sigma2(const float *x, int n) {
  float s = 0;
  for (int j = 0; j < n; j++) s = bq_add(s, bq_mul(x[j], x[j]));
  return bq_mul(s, 2.0f / (float)n);
}

int bq_iq4_max(const float *x, float *max) {
  float amax = 0;
  *max = 0;
  for (int j = 0; j < 32; j++) {
    const float ax = fabsf(x[j]);
    if (ax > amax) {
      amax = ax;
      *max = x[j];
    }
  }
  return amax >= 1e-15f;
}

/* The weighted sums of one trial: codes of id * x, sumqx = sum w q x, sumq2 = sum w q^2, in
 * element order, as ggml adds them. */
static void trial(const float *x, const float *w, float id, float *sumqx, float *sumq2) {
  const int8_t *v = bq_kvalues_iq4nl;
  float sx = 0, s2 = 0;
  for (int j = 0; j < 32; j++) {
    const float q = (float)v[bq_iq4_best_index(v, id * x[j])];
    const float wq = bq_mul(w[j], q);
    sx = bq_add(sx, bq_mul(wq, x[j]));
    s2 = bq_add(s2, bq_mul(wq, q));
  }
  *sumqx = sx;
  *sumq2 = s2;
}

float bq_iq4_fit__ref(const float *x, const float *w) {
  float max;
  if (!bq_iq4_max(x, &max)) return 0.0f;
  const float v0 = (float)bq_kvalues_iq4nl[0];
  float sumqx, sumq2;
  trial(x, w, 1 / (-max / v0), &sumqx, &sumq2);
  float d = sumq2 > 0 ? bq_div(sumqx, sumq2) : 0.0f;
  float best = d * sumqx;
  for (int itry = -NTRY; itry <= NTRY; itry++) {
    trial(x, w, (float)(itry + bq_kvalues_iq4nl[0]) / max, &sumqx, &sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = bq_div(sumqx, sumq2);
      best = d * sumqx;
    }
  }
  return d;
}

void bq_iq4_pack(const uint8_t *L, uint8_t *qs) {
  for (int j = 0; j < 16; j++) qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
}

void bq_iq4_codes__ref(const float *x, float id, uint8_t *qs) {
  uint8_t L[32];
  for (int j = 0; j < 32; j++) L[j] = (uint8_t)bq_iq4_best_index(bq_kvalues_iq4nl, id * x[j]);
  bq_iq4_pack(L, qs);
}

/* The IQ4_XS block of 256 values whose 8 sub-blocks fitted to scales (max_scale: the one of
 * largest magnitude, the first on a tie, 0 if none): d, the 6-bit scales and the codes. */
static void xs_finish(const float *x, const float *scales, float max_scale, bq_iq4_codes_fn *codes,
                      uint8_t *block) {
  block_iq4_xs b;
  const float d = -max_scale / 32;
  b.d = bq_fp32_to_fp16(d);
  const float id = d != 0 ? 1 / d : 0.0f;
  b.scales_h = 0;
  memset(b.scales_l, 0, sizeof b.scales_l);
  for (int ib = 0; ib < 8; ib++) {
    int l = bq_nearest_int(bq_mul(id, scales[ib]));
    l = l < -32 ? -32 : l > 31 ? 31 : l;
    const float dl = d * (float)l;
    codes(x + 32 * ib, dl != 0 ? 1 / dl : 0.0f, b.qs + 16 * ib);
    const int ls = l + 32;
    b.scales_l[ib / 2] |= (uint8_t)((ls & 0xF) << 4 * (ib % 2));
    b.scales_h |= (uint16_t)((ls >> 4) << 2 * ib);
  }
  memcpy(block, &b, sizeof b);
}

/* The IQ4_NL block of 32 values fitted to scale d: fp16 d and the codes of x / d. */
static void nl_finish(const float *x, float d, bq_iq4_codes_fn *codes, uint8_t *block) {
  block_iq4_nl b;
  b.d = bq_fp32_to_fp16(d);
  codes(x, d != 0 ? 1 / d : 0.0f, b.qs);
  memcpy(block, &b, sizeof b);
}

int bq_iq4_nl_rows(const bq_iq4_kernels *k, const float *x, void *y, size_t rows, size_t cols,
                   const float *qw) {
  if (cols % 32) return BQ_EINVAL;
  for (size_t r = 0; r < rows; r++)
    for (size_t i = 0; i < cols / 32; i++) {
      const float *xb = x + r * cols + 32 * i;
      float w[32];
      k->weights(xb, qw ? qw + 32 * i : NULL, qw ? bq_iq4_sigma2(xb, 32) : 0.0f, w);
      nl_finish(xb, k->fit(xb, w), k->codes,
                (uint8_t *)y + (r * (cols / 32) + i) * sizeof(block_iq4_nl));
    }
  return BQ_OK;
}

int bq_iq4_xs_rows(const bq_iq4_kernels *k, const float *x, void *y, size_t rows, size_t cols,
                   const float *qw) {
  if (cols % QK_K) return BQ_EINVAL;
  for (size_t r = 0; r < rows; r++)
    for (size_t i = 0; i < cols / QK_K; i++) {
      const float *xb = x + r * cols + QK_K * i;
      const float *qb = qw ? qw + QK_K * i : NULL;
      const float sigma2 = qw ? bq_iq4_sigma2(xb, QK_K) : 0.0f;
      float scales[8], max_scale = 0, amax_scale = 0;
      for (int ib = 0; ib < 8; ib++) {
        float w[32];
        k->weights(xb + 32 * ib, qb ? qb + 32 * ib : NULL, sigma2, w);
        scales[ib] = k->fit(xb + 32 * ib, w);
        if (fabsf(scales[ib]) > amax_scale) {
          amax_scale = fabsf(scales[ib]);
          max_scale = scales[ib];
        }
      }
      xs_finish(xb, scales, max_scale, k->codes,
                (uint8_t *)y + (r * (cols / QK_K) + i) * sizeof(block_iq4_xs));
    }
  return BQ_OK;
}

static const bq_iq4_kernels ref = {bq_iq4_weights, bq_iq4_fit__ref, bq_iq4_codes__ref};

BQ_QUANTIZE_ROWS_PROTO(iq4_nl, __ref) { return bq_iq4_nl_rows(&ref, x, y, rows, cols, qw); }
BQ_QUANTIZE_ROWS_PROTO(iq4_xs, __ref) { return bq_iq4_xs_rows(&ref, x, y, rows, cols, qw); }

/* Without weights, blocks do not depend on rows: n values are one row. */
BQ_QUANTIZE_PROTO(iq4_nl, __ref) { return bq_iq4_nl_quantize_rows__ref(x, y, 1, n, NULL); }
BQ_QUANTIZE_PROTO(iq4_xs, __ref) { return bq_iq4_xs_quantize_rows__ref(x, y, 1, n, NULL); }
