/* Q2_K reference: quantize_row_q2_K_ref, dequantize_row_q2_K, ggml_vec_dot_q2_K_q8_K_generic.
 *
 * NaN/Inf inputs, as ggml on x86-64: min/max scans and the max_scale/max_min picks skip NaN (every
 * comparison with it is false); a sub-block holding NaN or Inf fits to NaN, so its scale and min
 * lose those picks and quantize (through bq_nearest_int) to the codes x86-64 gives; no clamps are
 * added where ggml has none (the 4-bit scale and min codes are stored mod 16 and mod 256). */
#include "../kquants.h"

void bq_q2_K_requantize(const float *x, const block_q2_K *b, uint8_t *L) {
  const float d = bq_h2f(b->d), dmin = bq_h2f(b->dmin);
  for (int j = 0; j < 16; j++) {
    const float dl = bq_mul(d, (float)(b->scales[j] & 0xF));
    if (dl == 0) continue;
    const float dm = bq_mul(dmin, (float)(b->scales[j] >> 4));
    for (int i = 0; i < 16; i++) {
      const int l = bq_nearest_int(bq_div(bq_add(x[16 * j + i], dm), dl));
      L[16 * j + i] = (uint8_t)(l < 0 ? 0 : l > 3 ? 3 : l);
    }
  }
}

void bq_q2_K_scales(const float *scales, const float *mins, block_q2_K *b) {
  float max_scale = 0, max_min = 0; /* scales are >= 0 once the min is taken out */
  for (int j = 0; j < 16; j++) {
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  if (max_scale > 0) {
    const float iscale = bq_div(15.f, max_scale);
    for (int j = 0; j < 16; j++) b->scales[j] = (uint8_t)bq_nearest_int(bq_mul(iscale, scales[j]));
    b->d = bq_fp32_to_fp16(bq_div(max_scale, 15.f));
  } else {
    for (int j = 0; j < 16; j++) b->scales[j] = 0;
    b->d = bq_fp32_to_fp16(0.f);
  }
  if (max_min > 0) {
    const float iscale = bq_div(15.f, max_min);
    for (int j = 0; j < 16; j++)
      b->scales[j] |= (uint8_t)((unsigned)bq_nearest_int(bq_mul(iscale, mins[j])) << 4);
    b->dmin = bq_fp32_to_fp16(bq_div(max_min, 15.f));
  } else {
    b->dmin = bq_fp32_to_fp16(0.f);
  }
}

static void quantize_block(const float *x, block_q2_K *b) {
  uint8_t L[QK_K], Laux[16];
  float w[16], mins[16], scales[16];
  for (int j = 0; j < 16; j++) {
    for (int l = 0; l < 16; l++) w[l] = fabsf(x[16 * j + l]);
    scales[j] =
        bq_make_qkx2_quants(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, 1);
  }
  bq_q2_K_scales(scales, mins, b);
  bq_q2_K_requantize(x, b, L);
  bq_kq_pack_2bit(L, b->qs);
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

/* The 2-bit code of element e. */
static inline int code(const uint8_t *qs, int e) {
  return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

/* A block as integers: the 2-bit codes, and the 16 scales (low nibbles) and mins (high nibbles). */
static void decode(const uint8_t *p, bq_kq_block *k) {
  block_q2_K b;
  memcpy(&b, p, sizeof b);
  for (int e = 0; e < QK_K; e++) k->q[e] = (int8_t)code(b.qs, e);
  for (int j = 0; j < 16; j++) {
    k->scale[j] = b.scales[j] & 0xF;
    k->min[j] = b.scales[j] >> 4;
  }
  k->d = b.d;
  k->dmin = b.dmin;
  k->has_min = 1;
}

/* Decodes one block exactly as dequantize_row_q2_K: (d * scale) * q - (dmin * min). */
static void dequantize_block(const uint8_t *p, float *y) { bq_kq_dequantize_block(p, decode, y); }

BQ_REF_ROW_KERNELS(q2_K, QK_K)

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
        s += b.qs[e] * code(a.qs, e);
      }
      isum += (a.scales[j] & 0xF) * s;
    }
    const float dall = b.d * bq_h2f(a.d), dmin = b.d * bq_h2f(a.dmin);
    sumf += dall * (float)isum - dmin * (float)summs;
  }
  acc[0] = sumf;
  return BQ_OK;
}
