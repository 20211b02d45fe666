/* IQ4_NL reference: quantize_row_iq4_nl_ref, dequantize_row_iq4_nl,
 * ggml_vec_dot_iq4_nl_q8_0_generic, and the sub-block scale fit IQ4_XS shares
 * (quantize_row_iq4_nl_impl without importance weights).
 *
 * A block whose max |x| is below 1e-15 (all zeros, or all NaN) gets d = 0; ggml then packs a code
 * buffer it never wrote for that block (the previous block's codes, or stack bytes), so its qs are
 * unspecified. Here they are 0, whatever came before: a block's bytes depend on its own 32 values
 * only, so a row quantized in pieces equals the row quantized whole. */
#include "../iquants4.h"

/* ggml-common.h kvalues_iq4nl at ggml d99724f2b141fed9e1a9f402213506c081433465 (SHA-256 of the 16
 * bytes: 61aa4754...74b46163, checked by the native test). */
const int8_t bq_kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

float bq_iq4_fit(const float *x, int ntry, uint8_t *L, int *empty) {
  const int8_t *v = bq_kvalues_iq4nl;
  float w[32], amax = 0, max = 0;
  for (int j = 0; j < 32; j++) {
    w[j] = x[j] * x[j];
    const float ax = fabsf(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  *empty = amax < 1e-15f;
  if (*empty) return 0.0f;
  float d = ntry > 0 ? -max / (float)v[0] : max / (float)v[0];
  float id = 1 / d, sumqx = 0, sumq2 = 0;
  for (int j = 0; j < 32; j++) {
    const int l = bq_iq4_best_index(v, id * x[j]);
    L[j] = (uint8_t)l;
    const float q = (float)v[l];
    sumqx += w[j] * q * x[j];
    sumq2 += w[j] * q * q;
  }
  d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
  float best = d * sumqx;
  for (int itry = -ntry; itry <= ntry; itry++) {
    id = (float)(itry + v[0]) / max;
    sumqx = sumq2 = 0;
    for (int j = 0; j < 32; j++) {
      const float q = (float)v[bq_iq4_best_index(v, id * x[j])];
      sumqx += w[j] * q * x[j];
      sumq2 += w[j] * q * q;
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

BQ_QUANTIZE_PROTO(iq4_nl, __ref) {
  if (n % 32) return BQ_EINVAL;
  for (size_t i = 0; i < n / 32; i++) {
    block_iq4_nl b;
    uint8_t L[32];
    int empty;
    /* The reference stores the start codes with the least-squares d (ntry = -1: no search). */
    b.d = bq_fp32_to_fp16(bq_iq4_fit(x + 32 * i, -1, L, &empty));
    if (empty) memset(L, 0, sizeof L);
    for (int j = 0; j < 16; j++) b.qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_iq4_nl b;
  memcpy(&b, p, sizeof b);
  bq_nl32_dequantize(b.qs, bq_kvalues_iq4nl, bq_h2f(b.d), y);
}

BQ_REF_ROW_KERNELS(iq4_nl, 32)

int bq_nl32_dot_q8_0(const void *x, size_t block_bytes, size_t qs_offset, const int8_t *table,
                     float (*scale)(const uint8_t *block), const void *y, size_t n, float *acc) {
  if (n % 32) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / 32; i++) {
    const uint8_t *a = (const uint8_t *)x + i * block_bytes;
    block_q8_0 b;
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    const int sumi = bq_nl32_dot(a + qs_offset, table, b.qs);
    const float d = bq_h2f(b.d) * scale(a);
    sumf += d * (float)sumi;
  }
  acc[0] = sumf;
  return BQ_OK;
}

static float scale(const uint8_t *p) { return bq_h2f(bq_rd16(p + BQ_OFF(iq4_nl, d))); }

/* Per block: sumf += (yd * xd) * (float)(integer sum), one running sum in acc[0]. */
BQ_DOT_PROTO(iq4_nl, q8_0, __ref) {
  return bq_nl32_dot_q8_0(x, sizeof(block_iq4_nl), BQ_OFF(iq4_nl, qs), bq_kvalues_iq4nl, scale, y,
                          n, acc);
}
