/* Q2_K reference: quantize_row_q2_K_ref, dequantize_row_q2_K, ggml_vec_dot_q2_K_q8_K_generic.
 *
 * NaN/Inf inputs, as ggml on x86-64: min/max scans and the max_scale/max_min picks skip NaN (every
 * comparison with it is false); a sub-block holding NaN or Inf fits to NaN, so its scale and min
 * lose those picks and quantize (through bq_nearest_int) to the codes x86-64 gives; no clamps are
 * added where ggml has none (the 4-bit scale and min codes are stored mod 16 and mod 256). */
#include "../kquants.h"

static void quantize_block(const float *x, block_q2_K *b) {
  uint8_t L[QK_K], Laux[16];
  float w[16], mins[16], scales[16];
  float max_scale = 0, max_min = 0; /* scales are >= 0 once the min is taken out */
  for (int j = 0; j < 16; j++) {
    for (int l = 0; l < 16; l++) w[l] = fabsf(x[16 * j + l]);
    scales[j] =
        bq_make_qkx2_quants(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, 1);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  if (max_scale > 0) {
    const float iscale = 15.f / max_scale;
    for (int j = 0; j < 16; j++) b->scales[j] = (uint8_t)bq_nearest_int(iscale * scales[j]);
    b->d = bq_fp32_to_fp16(max_scale / 15.f);
  } else {
    for (int j = 0; j < 16; j++) b->scales[j] = 0;
    b->d = bq_fp32_to_fp16(0.f);
  }
  if (max_min > 0) {
    const float iscale = 15.f / max_min;
    for (int j = 0; j < 16; j++)
      b->scales[j] |= (uint8_t)((unsigned)bq_nearest_int(iscale * mins[j]) << 4);
    b->dmin = bq_fp32_to_fp16(max_min / 15.f);
  } else {
    b->dmin = bq_fp32_to_fp16(0.f);
  }
  /* Re-quantize against the stored scales; a sub-block whose scale came out 0 keeps the codes its
   * fit produced. */
  const float d = bq_h2f(b->d), dmin = bq_h2f(b->dmin);
  for (int j = 0; j < 16; j++) {
    const float dl = d * (float)(b->scales[j] & 0xF);
    if (dl == 0) continue;
    const float dm = dmin * (float)(b->scales[j] >> 4);
    for (int i = 0; i < 16; i++) {
      const int l = bq_nearest_int((x[16 * j + i] + dm) / dl);
      L[16 * j + i] = (uint8_t)(l < 0 ? 0 : l > 3 ? 3 : l);
    }
  }
  for (int h = 0; h < 2; h++)
    for (int l = 0; l < 32; l++) {
      const uint8_t *p = L + 128 * h + l;
      b->qs[32 * h + l] = (uint8_t)(p[0] | p[32] << 2 | p[64] << 4 | p[96] << 6);
    }
}

BQ_QUANTIZE_PROTO(q2_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q2_K b;
    quantize_block(x + i * QK_K, &b);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* Decodes one block exactly as dequantize_row_q2_K: (d * scale) * q - (dmin * min). */
static void dequantize_block(const uint8_t *p, float *y) {
  block_q2_K b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d), dmin = bq_h2f(b.dmin);
  for (int e = 0; e < QK_K; e++) {
    const int sc = b.scales[e / 16];
    const int q = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    const float dl = d * (float)(sc & 0xF), ml = dmin * (float)(sc >> 4);
    y[e] = dl * (float)q - ml;
  }
}

BQ_DEQUANTIZE_PROTO(q2_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++)
    dequantize_block((const uint8_t *)x + i * sizeof(block_q2_K), y + i * QK_K);
  return BQ_OK;
}

/* ggml keeps one running sum: sumf += (yd*d)*isum - (yd*dmin)*summs per block. State: acc[0]. */
BQ_DOT_PROTO(q2_K, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q2_K a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int summs = 0, isum = 0;
    for (int j = 0; j < 16; j++) summs += b.bsums[j] * (a.scales[j] >> 4);
    for (int j = 0; j < 16; j++) {
      int s = 0;
      for (int l = 0; l < 16; l++) {
        const int e = 16 * j + l;
        s += b.qs[e] * ((a.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3);
      }
      isum += (a.scales[j] & 0xF) * s;
    }
    const float dall = b.d * bq_h2f(a.d), dmin = b.d * bq_h2f(a.dmin);
    sumf += dall * (float)isum - dmin * (float)summs;
  }
  acc[0] = sumf;
  return BQ_OK;
}

BQ_DOT_PROTO(q2_K, f32, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  const float *v = y;
  float sumf = acc[0], t[QK_K];
  for (size_t i = 0; i < n / QK_K; i++, v += QK_K) {
    dequantize_block((const uint8_t *)x + i * sizeof(block_q2_K), t);
    for (int e = 0; e < QK_K; e++) sumf += t[e] * v[e];
  }
  acc[0] = sumf;
  return BQ_OK;
}
