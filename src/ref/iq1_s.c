/* IQ1_S reference: dequantize_row_iq1_s and ggml_vec_dot_iq1_s_q8_K_generic.
 *
 * Sub-block ib has the u16 h = qh[ib]: group g's grid point is iq1s_grid[qs[4ib + g] |
 * ((h >> 3g) & 7) << 8] (8 values in {-1, 0, 1}), the scale s = (h >> 12) & 7 and the shift
 * delta = -0.125f if bit 15 is set, else +0.125f: element = (D * (float)(2s + 1)) * (grid + delta).
 */
#include "../iquants.h"

#define IQ1_DELTA 0.125f /* ggml's IQ1S_DELTA */

static inline uint64_t grid_of(const block_iq1_s *b, int ib, int g) {
  return bq_iq1s_grid[b->qs[4 * ib + g] | (b->qh[ib] >> 3 * g & 7) << 8];
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_iq1_s b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int ib = 0; ib < 8; ib++) {
    const unsigned h = b.qh[ib];
    const float dl = d * (float)(2 * (h >> 12 & 7) + 1);
    const float delta = h & 0x8000 ? -IQ1_DELTA : IQ1_DELTA;
    for (int g = 0; g < 4; g++) {
      const uint64_t grid = grid_of(&b, ib, g);
      for (int j = 0; j < 8; j++) *y++ = dl * ((float)bq_grid_i8(grid, j) + delta);
    }
  }
}

BQ_REF_ROW_KERNELS(iq1_s, QK_K)

/* Per super-block two exact integer sums over sub-blocks, weighted by (2s + 1): sumi of grid * q8,
 * and sumi1 of (+-1) * (the two Q8_K bsums of the sub-block) for the delta; then
 * sumf += (D * yd) * ((float)sumi + 0.125f * (float)sumi1). The result is sumf. State: acc[0]. */
BQ_DOT_PROTO(iq1_s, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_iq1_s a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int32_t sumi = 0, sumi1 = 0;
    for (int ib = 0; ib < 8; ib++) {
      const unsigned h = a.qh[ib];
      const int32_t ls = (int32_t)(2 * (h >> 12 & 7) + 1), sign = h & 0x8000 ? -1 : 1;
      int32_t lsum = 0;
      for (int g = 0; g < 4; g++) {
        const uint64_t grid = grid_of(&a, ib, g);
        const int8_t *q8 = b.qs + 32 * ib + 8 * g;
        for (int j = 0; j < 8; j++) lsum += q8[j] * bq_grid_i8(grid, j);
      }
      sumi += ls * lsum;
      sumi1 += ls * sign * (b.bsums[2 * ib] + b.bsums[2 * ib + 1]);
    }
    sumf += bq_h2f(a.d) * b.d * ((float)sumi + IQ1_DELTA * (float)sumi1);
  }
  acc[0] = sumf;
  return BQ_OK;
}
