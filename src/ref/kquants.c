/* The K-quant quantizer helpers: ports of ggml's make_qkx2_quants (= make_qkx3_quants with
 * weights), make_qx_quants (rmse_type 1) and make_q3_quants (do_rmse) in ggml's float operation
 * order: every product and sum is one fp32 operation, evaluated left to right as ggml's C writes it
 * (w*l*l is (w*l)*l), and ints meet floats only through exact conversions. Their results decide
 * codes, so a different order changes bytes.
 *
 * NaN: every operation whose NaN can reach a code or a stored half goes through fp.h (bq_add...),
 * which keeps the first operand's NaN when both are NaN. Where a sum or a product of ggml's meets
 * two different NaNs, x86-64 keeps the one its compiler put in the destination register, which is
 * not always the C source's left operand: the operands here are written in the compiled code's
 * order (x * w for ggml's w * x[i], (x - min) * iscale for iscale * (x[i] - min)...), read from
 * the oracle's libggml-base.so and checked by tests/imat-qk.test.js on rows of random NaNs. */
#include "../kquants.h"

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* sum + a * b and sum + (a * b) * c, the running sums of a fit. */
static inline float acc_mul(float sum, float a, float b) { return bq_add(sum, bq_mul(a, b)); }
static inline float acc_mul3(float sum, float a, float b, float c) {
  return bq_add(sum, bq_mul(bq_mul(a, b), c));
}

/* The weighted error of codes L under scale and min: the sum of e * w, e = |diff| or diff^2,
 * diff = (scale * L + min) - x. Plain arithmetic: an error is only compared (see below). */
static float fit_error(int n, const float *x, const float *w, const uint8_t *L, float scale,
                       float min, int use_mad) {
  float err = 0;
  for (int i = 0; i < n; i++) {
    const float diff = (float)L[i] * scale + min - x[i];
    err += (use_mad ? fabsf(diff) : diff * diff) * w[i];
  }
  return err;
}

/* Where the fits below use plain arithmetic: in their trials. A trial's result is kept only if a
 * comparison of its sums or error is true, which no NaN passes, and its NaN-free sums are the
 * same in any arithmetic; a NaN x or w, or a NaN made there (Inf - Inf), rejects the trial. So
 * only what a fit starts from and returns (its first codes, sums and scale) needs fp.h. */

float bq_make_qkx2_quants(int n, int nmax, const float *x, const float *w, uint8_t *L,
                          float *the_min, uint8_t *Laux, float rmin, float rdelta, int nstep,
                          int use_mad) {
  float min = x[0], max = x[0];
  float sum_w = w[0], sum_x = x[0] * sum_w; /* for the trials only */
  for (int i = 1; i < n; i++) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w += w[i];
    sum_x += x[i] * w[i];
  }
  min = bq_select(min > 0, 0, min);
  if (max == min) {
    for (int i = 0; i < n; i++) L[i] = 0;
    *the_min = -min;
    return 0.0f;
  }
  float iscale = bq_div((float)nmax, bq_sub(max, min));
  float scale = bq_div(1, iscale);
  for (int i = 0; i < n; i++)
    L[i] = (uint8_t)clampi(bq_nearest_int(bq_mul(bq_sub(x[i], min), iscale)), 0, nmax);
  float best_error = fit_error(n, x, w, L, scale, min, use_mad);
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; is++) {
    /* min may have moved in an earlier trial: later trials use the new one (as ggml does). */
    iscale = (rmin + rdelta * (float)is + (float)nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; i++) {
      const int l = clampi(bq_nearest_int((x[i] - min) * iscale), 0, nmax);
      Laux[i] = (uint8_t)l;
      const float fl = (float)l, wl = w[i] * fl;
      sum_l += wl;
      sum_l2 += wl * fl;
      sum_xl += wl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      const float cur_error = fit_error(n, x, w, Laux, this_scale, this_min, use_mad);
      if (cur_error < best_error) {
        for (int i = 0; i < n; i++) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

/* The signed value of the first element of largest |x| (0 if none is above 0 or all are NaN). */
static float signed_absmax(int n, const float *x, float *amax_out) {
  float amax = 0, max = 0;
  for (int i = 0; i < n; i++) {
    const float ax = fabsf(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  *amax_out = amax;
  return max;
}

#define GROUP_MAX_EPS 1e-15f

/* The codes of one trial scale of make_qx_quants: clamp(nearest_int(iscale * x), -nmax, nmax-1). */
static inline int qx_code(float iscale, float x, int nmax) {
  return clampi(bq_nearest_int(bq_mul(iscale, x)), -nmax, nmax - 1);
}

float bq_make_qx_quants(int n, int nmax, const float *x, const float *qw, int8_t *L) {
  float amax;
  const float max = signed_absmax(n, x, &amax);
  if (amax < GROUP_MAX_EPS) {
    for (int i = 0; i < n; i++) L[i] = 0;
    return 0.0f;
  }
  float iscale = bq_div((float)-nmax, max);
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; i++) {
    const int l = qx_code(iscale, x[i], nmax);
    L[i] = (int8_t)(l + nmax);
    const float w = qw ? qw[i] : bq_mul(x[i], x[i]), fl = (float)l;
    sumlx = acc_mul3(sumlx, x[i], w, fl);
    suml2 = acc_mul3(suml2, w, fl, fl);
  }
  float scale = suml2 != 0 ? bq_div(sumlx, suml2) : 0.0f;
  float best = bq_mul(scale, sumlx);
  for (int is = -9; is <= 9; is++) {
    if (is == 0) continue;
    iscale = -((float)nmax + 0.1f * (float)is) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; i++) {
      const int l = clampi(bq_nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = qw ? qw[i] : x[i] * x[i], fl = (float)l;
      sumlx += w * x[i] * fl;
      suml2 += w * fl * fl;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; i++) L[i] = (int8_t)(nmax + qx_code(iscale, x[i], nmax));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

float bq_make_q3_quants(int n, int nmax, const float *x, int8_t *L) {
  float amax;
  const float max = signed_absmax(n, x, &amax);
  if (amax < GROUP_MAX_EPS) {
    for (int i = 0; i < n; i++) L[i] = 0;
    return 0.0f;
  }
  const float iscale = bq_div((float)-nmax, max);
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; i++) {
    const int l = qx_code(iscale, x[i], nmax);
    L[i] = (int8_t)l;
    const float w = bq_mul(x[i], x[i]), fl = (float)l;
    sumlx = acc_mul3(sumlx, w, x[i], fl);
    suml2 = acc_mul3(suml2, w, fl, fl);
  }
  /* The refinement keeps a change only if comparisons of its sums are true: plain arithmetic. */
  for (int itry = 0; itry < 5; itry++) {
    int n_changed = 0;
    for (int i = 0; i < n; i++) {
      const float w = x[i] * x[i], fl = (float)L[i];
      float slx = sumlx - w * x[i] * fl;
      if (slx > 0) {
        float sl2 = suml2 - w * fl * fl;
        const int new_l = clampi(bq_nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
        if (new_l != L[i]) {
          const float fn = (float)new_l;
          slx += w * x[i] * fn;
          sl2 += w * fn * fn;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = (int8_t)new_l;
            sumlx = slx;
            suml2 = sl2;
            n_changed++;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; i++) L[i] = (int8_t)(L[i] + nmax);
  return suml2 > 0 ? bq_div(sumlx, suml2) : 0.0f;
}

void bq_q45_K_fit(const float *x, int nmax, float rmin, int nstep, uint8_t *L, uint8_t *scales,
                  uint16_t *d_out, uint16_t *dmin_out) {
  uint8_t Laux[32];
  float w[32], mins[8], sc[8];
  for (int j = 0; j < 8; j++) {
    const float *xj = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; l++) sum_x2 = acc_mul(sum_x2, xj[l], xj[l]);
    const float av_x = bq_sqrt(bq_div(sum_x2, 32));
    for (int l = 0; l < 32; l++) w[l] = bq_add(av_x, fabsf(xj[l]));
    sc[j] = bq_make_qkx2_quants(32, nmax, xj, w, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, 0);
  }
  bq_q45_K_scales(sc, mins, scales, d_out, dmin_out);
  bq_q45_K_requantize(x, nmax, scales, *d_out, *dmin_out, L);
}

void bq_q45_K_scales(const float *sc, const float *mins, uint8_t *scales, uint16_t *d_out,
                     uint16_t *dmin_out) {
  float max_scale = 0, max_min = 0; /* scales are >= 0 once the min is taken out */
  for (int j = 0; j < 8; j++) {
    if (sc[j] > max_scale) max_scale = sc[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? bq_div(63.f, max_scale) : 0.f;
  const float inv_min = max_min > 0 ? bq_div(63.f, max_min) : 0.f;
  for (int j = 0; j < 8; j++) {
    /* ggml keeps nearest_int in a uint8_t (mod 256) before taking min(63, .). */
    uint8_t ls = (uint8_t)bq_nearest_int(bq_mul(inv_scale, sc[j]));
    uint8_t lm = (uint8_t)bq_nearest_int(bq_mul(inv_min, mins[j]));
    if (ls > 63) ls = 63;
    if (lm > 63) lm = 63;
    bq_q45_K_pack_scale(j, ls, lm, scales);
  }
  *d_out = bq_fp32_to_fp16(bq_div(max_scale, 63.f));
  *dmin_out = bq_fp32_to_fp16(bq_div(max_min, 63.f));
}

void bq_q45_K_pack_scale(int j, uint8_t ls, uint8_t lm, uint8_t *scales) {
  if (j < 4) {
    scales[j] = ls;
    scales[j + 4] = lm;
  } else {
    scales[j + 4] = (uint8_t)((ls & 0xF) | (lm & 0xF) << 4);
    scales[j - 4] |= (uint8_t)((ls >> 4) << 6);
    scales[j] |= (uint8_t)((lm >> 4) << 6);
  }
}

void bq_q45_K_requantize(const float *x, int nmax, const uint8_t *scales, uint16_t d16,
                         uint16_t dmin16, uint8_t *L) {
  const float d = bq_h2f(d16), dmin = bq_h2f(dmin16);
  for (int j = 0; j < 8; j++) {
    uint8_t s, m;
    bq_scale_min_k4(j, scales, &s, &m);
    const float dl = bq_mul(d, (float)s);
    if (dl == 0) continue;
    const float dm = bq_mul(dmin, (float)m);
    /* x + dm four at a time: gcc adds x to dm for elements 0..27 of the sub-block but dm to x for
     * 28..31, which decides whose NaN survives where both are NaN (dm is, when dmin is infinite
     * and m is 0). */
    for (int i = 0; i < 32; i++) {
      const float xi = x[32 * j + i], v = i < 28 ? bq_add(xi, dm) : bq_add(dm, xi);
      L[32 * j + i] = (uint8_t)clampi(bq_nearest_int(bq_div(v, dl)), 0, nmax);
    }
  }
}

void bq_kq_pack_2bit(const uint8_t *L, uint8_t *qs) {
  for (int h = 0; h < 2; h++)
    for (int l = 0; l < 32; l++) {
      const uint8_t *p = L + 128 * h + l;
      qs[32 * h + l] = (uint8_t)(p[0] | p[32] << 2 | p[64] << 4 | p[96] << 6);
    }
}

void bq_q45_K_pack_4bit(const uint8_t *L, uint8_t *qs) {
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l++)
      qs[32 * c + l] = (uint8_t)(L[64 * c + l] | L[64 * c + 32 + l] << 4);
}

void bq_q45_K_decode_scales(const uint8_t *scales, uint16_t d, uint16_t dmin, bq_kq_block *k) {
  for (int j = 0; j < 8; j++) {
    uint8_t sc, m;
    bq_scale_min_k4(j, scales, &sc, &m);
    k->scale[2 * j] = k->scale[2 * j + 1] = sc;
    k->min[2 * j] = k->min[2 * j + 1] = m;
  }
  k->d = d;
  k->dmin = dmin;
  k->has_min = 1;
}

void bq_kq_dequantize_block(const uint8_t *p, bq_kq_decode *decode, float *y) {
  bq_kq_block k;
  decode(p, &k);
  const float d = bq_h2f(k.d), dmin = bq_h2f(k.dmin);
  for (int e = 0; e < QK_K; e++) {
    const float dl = d * (float)k.scale[e / 16];
    if (k.has_min)
      y[e] = dl * (float)k.q[e] - dmin * (float)k.min[e / 16];
    else
      y[e] = dl * (float)k.q[e];
  }
}

int bq_kq_dot_q8_K(const void *x, size_t block_bytes, bq_kq_decode *decode, const void *y, size_t n,
                   float *acc) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    bq_kq_block k;
    block_q8_K b;
    decode((const uint8_t *)x + i * block_bytes, &k);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int32_t lane[8] = {0};
    for (int e = 0; e < QK_K; e++) lane[e % 8] += k.scale[e / 16] * (b.qs[e] * k.q[e]);
    const float dd = bq_h2f(k.d) * b.d;
    for (int l = 0; l < 8; l++) acc[1 + l] += dd * (float)lane[l];
    if (k.has_min) {
      int sumi = 0;
      for (int j = 0; j < 16; j++) sumi += b.bsums[j] * k.min[j];
      const float dmin = bq_h2f(k.dmin) * b.d;
      sumf -= dmin * (float)sumi;
    }
  }
  acc[0] = sumf;
  return BQ_OK;
}
