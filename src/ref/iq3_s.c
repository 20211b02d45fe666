/* IQ3_S reference: dequantize_row_iq3_s and ggml_vec_dot_iq3_s_q8_K_generic.
 *
 * Group g of sub-block ib is two points of iq3s_grid: index k = 2g (elements 0-3) and 2g + 1
 * (elements 4-7), each qs[8ib + k] | ((qh[ib] >> k) & 1) << 8; the full sign byte is
 * signs[4ib + g]; the scale s is nibble ib % 2 of scales[ib / 2]:
 * element = (D * (float)(1 + 2s)) * grid byte * (+-1). */
#include "../iquants.h"

/* Element j (0..7) of group g of sub-block ib. */
static inline int magnitude(const block_iq3_s *b, int ib, int g, int j) {
  const int k = 2 * g + j / 4;
  return bq_grid_u8(bq_iq3s_grid[b->qs[8 * ib + k] | (b->qh[ib] >> k & 1) << 8], j % 4);
}

static inline int scale(const block_iq3_s *b, int ib) {
  return b->scales[ib / 2] >> 4 * (ib % 2) & 0xF;
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_iq3_s b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int ib = 0; ib < 8; ib++) {
    const float db = d * (float)(1 + 2 * scale(&b, ib));
    for (int g = 0; g < 4; g++) {
      const uint8_t s = b.signs[4 * ib + g];
      for (int j = 0; j < 8; j++) *y++ = db * (float)magnitude(&b, ib, g, j) * bq_sign_f(s, j);
    }
  }
}

BQ_REF_ROW_KERNELS(iq3_s, QK_K)

/* Integer sums per sub-block times (2s + 1), sumf += (D * yd) * (float)bsum per super-block; the
 * result is sumf itself. State: acc[0] = sumf. */
BQ_DOT_PROTO(iq3_s, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_iq3_s a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int32_t bsum = 0;
    for (int ib = 0; ib < 8; ib++) {
      int32_t sumi = 0;
      for (int g = 0; g < 4; g++) {
        const uint8_t s = a.signs[4 * ib + g];
        const int8_t *q8 = b.qs + 32 * ib + 8 * g;
        for (int j = 0; j < 8; j++) sumi += magnitude(&a, ib, g, j) * q8[j] * bq_sign_i(s, j);
      }
      bsum += sumi * (1 + 2 * scale(&a, ib));
    }
    sumf += bq_h2f(a.d) * b.d * (float)bsum;
  }
  acc[0] = sumf;
  return BQ_OK;
}
