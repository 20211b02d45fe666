/* IQ2_S reference: dequantize_row_iq2_s and ggml_vec_dot_iq2_s_q8_K_generic.
 *
 * Group g of sub-block ib: grid point iq2s_grid[qs[4ib + g] | ((qh[ib] >> 2g) & 3) << 8] with the
 * full sign byte signs[4ib + g]; scales as IQ2_XS (a nibble per half sub-block):
 * element = (D * (0.5f + s)) * 0.25f * grid byte * (+-1). */
#include "../iquants.h"

static void decode(const uint8_t *p, bq_iq2_block *k) {
  block_iq2_s b;
  memcpy(&b, p, sizeof b);
  for (int ib = 0; ib < 8; ib++)
    for (int g = 0; g < 4; g++) {
      k->grid[4 * ib + g] = bq_iq2s_grid[b.qs[4 * ib + g] | (b.qh[ib] >> 2 * g & 3) << 8];
      k->sign[4 * ib + g] = b.signs[4 * ib + g];
    }
  memcpy(k->scales, b.scales, sizeof b.scales);
  k->d = b.d;
}

static void dequantize_block(const uint8_t *p, float *y) { bq_iq2_dequantize_block(p, decode, y); }

BQ_REF_ROW_KERNELS(iq2_s, QK_K)

/* As IQ2_XS: integer sums per half sub-block times (2s + 1), sumf += (D * yd) * (float)bsum per
 * super-block, result 0.125f * sumf. State: acc[0] = sumf. */
BQ_DOT_PROTO(iq2_s, q8_K, __ref) {
  return bq_iq2_dot_q8_K(x, sizeof(block_iq2_s), decode, y, n, acc);
}

float bq_iq2_s_dot_q8_K_sum__ref(const float *acc) { return 0.125f * acc[0]; }
