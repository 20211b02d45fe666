/* IQ4_XS reference: dequantize_row_iq4_xs and ggml_vec_dot_iq4_xs_q8_K_generic. The quantizer,
 * with and without importance weights, is in src/imat/iq4.c. */
#include "../iquants4.h"

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
