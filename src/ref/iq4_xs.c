/* IQ4_XS reference: quantize_row_iq4_xs_ref (quantize_iq4_xs without importance weights),
 * dequantize_row_iq4_xs, ggml_vec_dot_iq4_xs_q8_K_generic.
 *
 * Each 32-element sub-block is fitted as IQ4_NL with a 15-step search; the super-block stores
 * d = -(the fitted scale of largest magnitude) / 32 and a 6-bit scale l + 32 per sub-block, and
 * every code is then re-derived from d * l. Codes go through bq_nearest_int (ggml's nearest_int,
 * with x86-64's result for NaN and out-of-range inputs), so NaN and Inf inputs give ggml's bytes.
 */
#include "../iquants4.h"

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

BQ_QUANTIZE_PROTO(iq4_xs, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    const float *xb = x + i * QK_K;
    block_iq4_xs b;
    uint8_t L[QK_K];
    float scales[8], max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < 8; ib++) {
      int empty;
      scales[ib] = bq_iq4_fit(xb + 32 * ib, 7, L + 32 * ib, &empty);
      if (empty) continue;
      const float abs_d = fabsf(scales[ib]);
      if (abs_d > amax_scale) {
        amax_scale = abs_d;
        max_scale = scales[ib];
      }
    }
    const float d = -max_scale / 32;
    b.d = bq_fp32_to_fp16(d);
    const float id = d != 0 ? 1 / d : 0.0f;
    b.scales_h = 0;
    for (int ib = 0; ib < 8; ib++) {
      const int l = clampi(bq_nearest_int(id * scales[ib]), -32, 31);
      const float dl = d * (float)l;
      const float idl = dl != 0 ? 1 / dl : 0.0f;
      for (int j = 0; j < 32; j++)
        L[32 * ib + j] = (uint8_t)bq_iq4_best_index(bq_kvalues_iq4nl, idl * xb[32 * ib + j]);
      const int ls = l + 32;
      if (ib % 2 == 0)
        b.scales_l[ib / 2] = (uint8_t)(ls & 0xF);
      else
        b.scales_l[ib / 2] |= (uint8_t)((ls & 0xF) << 4);
      b.scales_h |= (uint16_t)((ls >> 4) << 2 * ib);
    }
    for (int ib = 0; ib < 8; ib++)
      for (int j = 0; j < 16; j++)
        b.qs[16 * ib + j] = (uint8_t)(L[32 * ib + j] | L[32 * ib + 16 + j] << 4);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* The 6-bit scale of sub-block ib, 0..63 (the multiplier is that minus 32). */
static inline int scale6(const block_iq4_xs *b, int ib) {
  return (b->scales_l[ib / 2] >> 4 * (ib % 2) & 0xF) | (b->scales_h >> 2 * ib & 3) << 4;
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_iq4_xs b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int ib = 0; ib < 8; ib++, y += 32) {
    const float dl = d * (float)(scale6(&b, ib) - 32);
    bq_nl32_dequantize(b.qs + 16 * ib, bq_kvalues_iq4nl, dl, y);
  }
}

BQ_REF_ROW_KERNELS(iq4_xs, QK_K)

/* ggml adds one float term per 32-element sub-block: sumf += ((xd * yd) * (ls - 32)) * sumi. */
BQ_DOT_PROTO(iq4_xs, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_iq4_xs a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    const float d4d8 = bq_h2f(a.d) * b.d;
    for (int ib = 0; ib < 8; ib++) {
      const int sumi = bq_nl32_dot(a.qs + 16 * ib, bq_kvalues_iq4nl, b.qs + 32 * ib);
      const float dl = d4d8 * (float)(scale6(&a, ib) - 32);
      sumf += dl * (float)sumi;
    }
  }
  acc[0] = sumf;
  return BQ_OK;
}
