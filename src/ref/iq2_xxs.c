/* IQ2_XXS reference: dequantize_row_iq2_xxs and ggml_vec_dot_iq2_xxs_q8_K_generic.
 *
 * Sub-block ib (32 elements) is 8 bytes: four grid indices into iq2xxs_grid, then a u32 w holding
 * the four 7-bit sign indices (group g at bits 7g..7g+6) and the scale s = w >> 28. Element j of
 * group g decodes to (D * (0.5f + s)) * 0.25f * grid byte j * (+-1). */
#include "../iquants.h"

static void dequantize_block(const uint8_t *p, float *y) {
  block_iq2_xxs b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int ib = 0; ib < 8; ib++) {
    const uint8_t *a = b.qs + 8 * ib;
    const uint32_t w = bq_rd32(a + 4);
    const float db = d * (0.5f + (float)(w >> 28)) * 0.25f;
    for (int g = 0; g < 4; g++) {
      const uint64_t grid = bq_iq2xxs_grid[a[g]];
      const uint8_t s = bq_ksigns_iq2xs[w >> 7 * g & 127];
      for (int j = 0; j < 8; j++) *y++ = db * (float)bq_grid_u8(grid, j) * bq_sign_f(s, j);
    }
  }
}

BQ_REF_ROW_KERNELS(iq2_xxs, QK_K)

/* Per super-block, an exact integer sum over sub-blocks of (2s + 1) * sum(grid * sign * q8), then
 * sumf += (D * yd) * (float)bsum; the result is 0.125f * sumf (the (2s + 1) / 8 of the decoder's
 * (0.5 + s) * 0.25). State: acc[0] = sumf. */
BQ_DOT_PROTO(iq2_xxs, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_iq2_xxs a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int32_t bsum = 0;
    for (int ib = 0; ib < 8; ib++) {
      const uint8_t *q = a.qs + 8 * ib;
      const uint32_t w = bq_rd32(q + 4);
      int32_t sumi = 0;
      for (int g = 0; g < 4; g++) {
        const uint64_t grid = bq_iq2xxs_grid[q[g]];
        const uint8_t s = bq_ksigns_iq2xs[w >> 7 * g & 127];
        const int8_t *q8 = b.qs + 32 * ib + 8 * g;
        for (int j = 0; j < 8; j++) sumi += bq_grid_u8(grid, j) * q8[j] * bq_sign_i(s, j);
      }
      bsum += sumi * (int32_t)(2 * (w >> 28) + 1);
    }
    sumf += bq_h2f(a.d) * b.d * (float)bsum;
  }
  acc[0] = sumf;
  return BQ_OK;
}

float bq_iq2_xxs_dot_q8_K_sum__ref(const float *acc) { return 0.125f * acc[0]; }
