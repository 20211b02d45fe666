/* IQ2_S reference: dequantize_row_iq2_s and ggml_vec_dot_iq2_s_q8_K_generic.
 *
 * Group g of sub-block ib: grid point iq2s_grid[qs[4ib + g] | ((qh[ib] >> 2g) & 3) << 8] with the
 * full sign byte signs[4ib + g]; scales as IQ2_XS (a nibble per half sub-block):
 * element = (D * (0.5f + s)) * 0.25f * grid byte * (+-1). */
#include "../iquants.h"

static inline uint64_t grid_of(const block_iq2_s *b, int ib, int g) {
  return bq_iq2s_grid[b->qs[4 * ib + g] | (b->qh[ib] >> 2 * g & 3) << 8];
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_iq2_s b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int ib = 0; ib < 8; ib++) {
    const float db[2] = {d * (0.5f + (float)(b.scales[ib] & 0xF)) * 0.25f,
                         d * (0.5f + (float)(b.scales[ib] >> 4)) * 0.25f};
    for (int g = 0; g < 4; g++) {
      const uint64_t grid = grid_of(&b, ib, g);
      const uint8_t s = b.signs[4 * ib + g];
      for (int j = 0; j < 8; j++) *y++ = db[g / 2] * (float)bq_grid_u8(grid, j) * bq_sign_f(s, j);
    }
  }
}

BQ_IQGRID_ROW_KERNELS(iq2_s)

/* As IQ2_XS: integer sums per half sub-block times (2s + 1), sumf += (D * yd) * (float)bsum per
 * super-block, result 0.125f * sumf. State: acc[0] = sumf. */
BQ_DOT_PROTO(iq2_s, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_iq2_s a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int32_t bsum = 0;
    for (int ib = 0; ib < 8; ib++) {
      for (int h = 0; h < 2; h++) {
        int32_t sumi = 0;
        for (int g = 2 * h; g < 2 * h + 2; g++) {
          const uint64_t grid = grid_of(&a, ib, g);
          const uint8_t s = a.signs[4 * ib + g];
          const int8_t *q8 = b.qs + 32 * ib + 8 * g;
          for (int j = 0; j < 8; j++) sumi += bq_grid_u8(grid, j) * q8[j] * bq_sign_i(s, j);
        }
        bsum += sumi * (2 * (a.scales[ib] >> 4 * h & 0xF) + 1);
      }
    }
    sumf += bq_h2f(a.d) * b.d * (float)bsum;
  }
  acc[0] = sumf;
  return BQ_OK;
}

float bq_iq2_s_dot_q8_K_sum__ref(const float *acc) { return 0.125f * acc[0]; }
