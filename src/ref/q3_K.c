/* Q3_K reference: quantize_row_q3_K_ref, dequantize_row_q3_K, ggml_vec_dot_q3_K_q8_K_generic.
 *
 * NaN/Inf inputs, as ggml on x86-64: the amax scans skip NaN (comparisons with it are false), a
 * sub-block whose fit turns NaN loses the max_scale pick, and every code goes through
 * bq_nearest_int and ggml's clamps, so the bytes are those x86-64 gives; d may be Inf or NaN. */
#include "../kquants.h"

static void quantize_block(const float *x, block_q3_K *b) {
  int8_t L[QK_K];
  float scales[16];
  float max_scale = 0, amax = 0;
  for (int j = 0; j < 16; j++) {
    scales[j] = bq_make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
    const float a = fabsf(scales[j]);
    if (a > amax) {
      amax = a;
      max_scale = scales[j];
    }
  }
  memset(b->scales, 0, sizeof b->scales);
  if (max_scale != 0) {
    const float iscale = -32.f / max_scale;
    for (int j = 0; j < 16; j++) {
      /* ggml stores nearest_int in an int8_t first, then clamps: keep that order. */
      int l = (int8_t)(uint8_t)bq_nearest_int(iscale * scales[j]);
      l = (l < -32 ? -32 : l > 31 ? 31 : l) + 32;
      if (j < 8)
        b->scales[j] = (uint8_t)(l & 0xF);
      else
        b->scales[j - 8] |= (uint8_t)((l & 0xF) << 4);
      b->scales[8 + j % 4] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
    }
    b->d = bq_fp32_to_fp16(1 / iscale);
  } else {
    b->d = bq_fp32_to_fp16(0.f);
  }
  /* Re-quantize against the stored scale; a sub-block whose scale is 0 keeps its fit's codes. */
  const float d = bq_h2f(b->d);
  for (int j = 0; j < 16; j++) {
    const float dl = d * (float)(bq_q3_K_scale(b->scales, j) - 32);
    if (dl == 0) continue;
    for (int i = 0; i < 16; i++) {
      const int l = bq_nearest_int(x[16 * j + i] / dl);
      L[16 * j + i] = (int8_t)((l < -4 ? -4 : l > 3 ? 3 : l) + 4);
    }
  }
  memset(b->hmask, 0, sizeof b->hmask);
  for (int e = 0; e < QK_K; e++) {
    if (L[e] > 3) {
      b->hmask[e % 32] |= (uint8_t)(1u << (e / 32));
      L[e] -= 4;
    }
  }
  for (int h = 0; h < 2; h++)
    for (int l = 0; l < 32; l++) {
      const int8_t *p = L + 128 * h + l;
      b->qs[32 * h + l] = (uint8_t)(p[0] | p[32] << 2 | p[64] << 4 | p[96] << 6);
    }
}

BQ_QUANTIZE_PROTO(q3_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q3_K b;
    quantize_block(x + i * QK_K, &b);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* The signed code of element e, -4..3: the 2-bit code, minus 4 unless its hmask bit is set. */
static inline int code(const block_q3_K *b, int e) {
  const int q = (b->qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
  return q - (b->hmask[e % 32] >> (e / 32) & 1 ? 0 : 4);
}

/* Decodes one block exactly as dequantize_row_q3_K: (d * (scale - 32)) * code. */
static void dequantize_block(const uint8_t *p, float *y) {
  block_q3_K b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int e = 0; e < QK_K; e++) {
    const float dl = d * (float)(bq_q3_K_scale(b.scales, e / 16) - 32);
    y[e] = dl * (float)code(&b, e);
  }
}

BQ_DEQUANTIZE_PROTO(q3_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++)
    dequantize_block((const uint8_t *)x + i * sizeof(block_q3_K), y + i * QK_K);
  return BQ_OK;
}

/* ggml sums element e's integer product into lane e % 8, adds (d*yd) * lane to eight float sums
 * per block, and adds the eight sums to sumf (0) at the end. State: acc[0] = sumf, acc[1..8] = the
 * eight sums, so the left-to-right lane sum is ggml's final reduction. */
BQ_DOT_PROTO(q3_K, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q3_K a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int32_t lane[8] = {0};
    for (int e = 0; e < QK_K; e++)
      lane[e % 8] += (bq_q3_K_scale(a.scales, e / 16) - 32) * (b.qs[e] * code(&a, e));
    const float dd = bq_h2f(a.d) * b.d;
    for (int l = 0; l < 8; l++) acc[1 + l] += dd * (float)lane[l];
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q3_K, f32, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  const float *v = y;
  float sumf = acc[0], t[QK_K];
  for (size_t i = 0; i < n / QK_K; i++, v += QK_K) {
    dequantize_block((const uint8_t *)x + i * sizeof(block_q3_K), t);
    for (int e = 0; e < QK_K; e++) sumf += t[e] * v[e];
  }
  acc[0] = sumf;
  return BQ_OK;
}
