/* IQ2_XS reference: dequantize_row_iq2_xs and ggml_vec_dot_iq2_xs_q8_K_generic.
 *
 * Group g of sub-block ib is the u16 v = qs[4ib + g]: grid point iq2xs_grid[v & 511] with sign byte
 * ksigns_iq2xs[v >> 9]. Each half sub-block (groups 0-1, 2-3) has its own 4-bit scale s, the low
 * and high nibble of scales[ib]: element = (D * (0.5f + s)) * 0.25f * grid byte * (+-1). The
 * dequantizer and the Q8_K dot here serve IQ2_S as well, which differs only in where a group's grid
 * point and sign byte come from (bq_iq2_block, iquants.h). */
#include "../iquants.h"

void bq_iq2_dequantize_block(const uint8_t *p, bq_iq2_decode *decode, float *y) {
  bq_iq2_block b;
  decode(p, &b);
  const float d = bq_h2f(b.d);
  for (int ib = 0; ib < 8; ib++) {
    const float db[2] = {d * (0.5f + (float)(b.scales[ib] & 0xF)) * 0.25f,
                         d * (0.5f + (float)(b.scales[ib] >> 4)) * 0.25f};
    for (int g = 0; g < 4; g++) {
      const uint64_t grid = b.grid[4 * ib + g];
      const uint8_t s = b.sign[4 * ib + g];
      for (int j = 0; j < 8; j++) *y++ = db[g / 2] * (float)bq_grid_u8(grid, j) * bq_sign_f(s, j);
    }
  }
}

int bq_iq2_dot_q8_K(const void *x, size_t block_bytes, bq_iq2_decode *decode, const void *y,
                    size_t n, float *acc) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    bq_iq2_block a;
    block_q8_K b;
    decode((const uint8_t *)x + i * block_bytes, &a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int32_t bsum = 0;
    for (int ib = 0; ib < 8; ib++) {
      for (int h = 0; h < 2; h++) {
        int32_t sumi = 0;
        for (int g = 2 * h; g < 2 * h + 2; g++) {
          const uint64_t grid = a.grid[4 * ib + g];
          const uint8_t s = a.sign[4 * ib + g];
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

/* Group 4ib + g: the u16 v = qs[4ib + g]. */
static void decode(const uint8_t *p, bq_iq2_block *k) {
  block_iq2_xs b;
  memcpy(&b, p, sizeof b);
  for (int i = 0; i < 32; i++) {
    k->grid[i] = bq_iq2xs_grid[b.qs[i] & 511];
    k->sign[i] = bq_ksigns_iq2xs[b.qs[i] >> 9];
  }
  memcpy(k->scales, b.scales, sizeof b.scales);
  k->d = b.d;
}

static void dequantize_block(const uint8_t *p, float *y) { bq_iq2_dequantize_block(p, decode, y); }

BQ_REF_ROW_KERNELS(iq2_xs, QK_K)

BQ_DOT_PROTO(iq2_xs, q8_K, __ref) {
  return bq_iq2_dot_q8_K(x, sizeof(block_iq2_xs), decode, y, n, acc);
}

float bq_iq2_xs_dot_q8_K_sum__ref(const float *acc) { return 0.125f * acc[0]; }
