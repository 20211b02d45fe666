/* Q5_K reference: quantize_row_q5_K_ref, dequantize_row_q5_K, ggml_vec_dot_q5_K_q8_K_generic.
 *
 * NaN/Inf inputs, as ggml on x86-64: a sub-block holding NaN or Inf fits to NaN (its weights and
 * its min/max scan are NaN or infinite), loses the max_scale and max_min picks, and its codes go
 * through bq_nearest_int and ggml's clamps, so the bytes are those x86-64 gives. */
#include "../kquants.h"

BQ_QUANTIZE_PROTO(q5_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q5_K b;
    uint8_t L[QK_K];
    bq_q45_K_fit(x + i * QK_K, 31, -0.5f, 15, L, b.scales, &b.d, &b.dmin);
    memset(b.qh, 0, sizeof b.qh);
    for (int e = 0; e < QK_K; e++) {
      if (L[e] > 15) {
        L[e] -= 16;
        b.qh[e % 32] |= (uint8_t)(1u << (e / 32));
      }
    }
    for (int c = 0; c < 4; c++)
      for (int l = 0; l < 32; l++)
        b.qs[32 * c + l] = (uint8_t)(L[64 * c + l] | L[64 * c + 32 + l] << 4);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* The 5-bit code of element e: its nibble plus 16 if its qh bit is set. */
static inline int code(const block_q5_K *b, int e) {
  const int lo = b->qs[32 * (e / 64) + e % 32] >> (e % 64 < 32 ? 0 : 4) & 0xF;
  return lo + (b->qh[e % 32] >> (e / 32) & 1 ? 16 : 0);
}

/* Decodes one block exactly as dequantize_row_q5_K: (d * scale) * q - (dmin * min). */
static void dequantize_block(const uint8_t *p, float *y) {
  block_q5_K b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d), dmin = bq_h2f(b.dmin);
  for (int j = 0; j < 8; j++) {
    uint8_t sc, m;
    bq_scale_min_k4(j, b.scales, &sc, &m);
    const float dl = d * (float)sc, ml = dmin * (float)m;
    for (int l = 0; l < 32; l++) y[32 * j + l] = dl * (float)code(&b, 32 * j + l) - ml;
  }
}

BQ_DEQUANTIZE_PROTO(q5_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++)
    dequantize_block((const uint8_t *)x + i * sizeof(block_q5_K), y + i * QK_K);
  return BQ_OK;
}

/* As Q4_K's dot: acc[0] = ggml's sumf (the mins, block by block), acc[1..8] = its eight sums. */
BQ_DOT_PROTO(q5_K, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q5_K a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; j++) bq_scale_min_k4(j, a.scales, &sc[j], &m[j]);
    int sumi = 0;
    for (int j = 0; j < 16; j++) sumi += b.bsums[j] * m[j / 2];
    int32_t lane[8] = {0};
    for (int e = 0; e < QK_K; e++) lane[e % 8] += sc[e / 32] * (b.qs[e] * code(&a, e));
    const float dd = bq_h2f(a.d) * b.d;
    for (int l = 0; l < 8; l++) acc[1 + l] += dd * (float)lane[l];
    const float dmin = bq_h2f(a.dmin) * b.d;
    sumf -= dmin * (float)sumi;
  }
  acc[0] = sumf;
  return BQ_OK;
}

BQ_DOT_PROTO(q5_K, f32, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  const float *v = y;
  float sumf = acc[0], t[QK_K];
  for (size_t i = 0; i < n / QK_K; i++, v += QK_K) {
    dequantize_block((const uint8_t *)x + i * sizeof(block_q5_K), t);
    for (int e = 0; e < QK_K; e++) sumf += t[e] * v[e];
  }
  acc[0] = sumf;
  return BQ_OK;
}
