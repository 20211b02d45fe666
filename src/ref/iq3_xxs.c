/* IQ3_XXS reference: dequantize_row_iq3_xxs and ggml_vec_dot_iq3_xxs_q8_K_generic.
 *
 * Group g of sub-block ib is two points of iq3xxs_grid, qs[8ib + 2g] for elements 0-3 and
 * qs[8ib + 2g + 1] for 4-7; the sub-block's u32 w = sas[ib] holds the sign indices (group g at bits
 * 7g..7g+6, through ksigns_iq2xs) and the scale s = w >> 28:
 * element = (D * (0.5f + s)) * 0.5f * grid byte * (+-1). */
#include "../iquants.h"

/* Element j (0..7) of group g's pair of grid points. */
static inline int magnitude(const uint8_t *qs, int g, int j) {
  return bq_grid_u8(bq_iq3xxs_grid[qs[2 * g + j / 4]], j % 4);
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_iq3_xxs b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int ib = 0; ib < 8; ib++) {
    const uint32_t w = bq_rd32(b.sas + 4 * ib);
    const float db = d * (0.5f + (float)(w >> 28)) * 0.5f;
    for (int g = 0; g < 4; g++) {
      const uint8_t s = bq_ksigns_iq2xs[w >> 7 * g & 127];
      for (int j = 0; j < 8; j++)
        *y++ = db * (float)magnitude(b.qs + 8 * ib, g, j) * bq_sign_f(s, j);
    }
  }
}

BQ_REF_ROW_KERNELS(iq3_xxs, QK_K)

/* Integer sums per sub-block times (2s + 1), sumf += (D * yd) * (float)bsum per super-block; the
 * result is 0.25f * sumf ((2s + 1) / 4 = (0.5 + s) * 0.5). State: acc[0] = sumf. */
BQ_DOT_PROTO(iq3_xxs, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_iq3_xxs a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int32_t bsum = 0;
    for (int ib = 0; ib < 8; ib++) {
      const uint32_t w = bq_rd32(a.sas + 4 * ib);
      int32_t sumi = 0;
      for (int g = 0; g < 4; g++) {
        const uint8_t s = bq_ksigns_iq2xs[w >> 7 * g & 127];
        const int8_t *q8 = b.qs + 32 * ib + 8 * g;
        for (int j = 0; j < 8; j++)
          sumi += magnitude(a.qs + 8 * ib, g, j) * q8[j] * bq_sign_i(s, j);
      }
      bsum += sumi * (int32_t)(2 * (w >> 28) + 1);
    }
    sumf += bq_h2f(a.d) * b.d * (float)bsum;
  }
  acc[0] = sumf;
  return BQ_OK;
}

float bq_iq3_xxs_dot_q8_K_sum__ref(const float *acc) { return 0.25f * acc[0]; }
