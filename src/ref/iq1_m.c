/* IQ1_M reference: dequantize_row_iq1_m and ggml_vec_dot_iq1_m_q8_K_generic.
 *
 * No d field: the fp16 super-block scale is spread over the top nibbles of the four u16 words
 * sc[0..3] of scales (sc[0] bits 12..15 are its bits 0..3, sc[1]'s its bits 4..7, and so on). Group
 * g of sub-block ib has the nibble q of qh[2ib + g/2] (low for even g): grid point
 * iq1s_grid[qs[4ib + g] | (q & 7) << 8], delta = -0.125f if q & 8, else +0.125f. Each 16 elements
 * (groups 0-1, 2-3) have a 3-bit scale s, bits 6(ib%2) + 3(g/2) of sc[ib/2]:
 * element = (D * (float)(2s + 1)) * (grid + delta). */
#include "../iquants.h"

#define IQ1_DELTA 0.125f /* ggml's IQ1M_DELTA */

typedef struct {
  uint16_t sc[4];
  float d;
} iq1m_scales;

static inline iq1m_scales read_scales(const block_iq1_m *b) {
  iq1m_scales s;
  for (int k = 0; k < 4; k++) s.sc[k] = bq_rd16(b->scales + 2 * k);
  const uint16_t h = (uint16_t)(s.sc[0] >> 12 | (s.sc[1] >> 8 & 0x00F0) | (s.sc[2] >> 4 & 0x0F00) |
                                (s.sc[3] & 0xF000));
  s.d = bq_h2f(h);
  return s;
}

/* 2s + 1 for half h (0, 1) of sub-block ib. */
static inline int scale(const iq1m_scales *s, int ib, int h) {
  return 2 * (s->sc[ib / 2] >> (6 * (ib % 2) + 3 * h) & 7) + 1;
}

static inline int nibble(const block_iq1_m *b, int ib, int g) {
  return b->qh[2 * ib + g / 2] >> 4 * (g % 2) & 0xF;
}

static inline uint64_t grid_of(const block_iq1_m *b, int ib, int g) {
  return bq_iq1s_grid[b->qs[4 * ib + g] | (nibble(b, ib, g) & 7) << 8];
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_iq1_m b;
  memcpy(&b, p, sizeof b);
  const iq1m_scales s = read_scales(&b);
  for (int ib = 0; ib < 8; ib++) {
    const float dl[2] = {s.d * (float)scale(&s, ib, 0), s.d * (float)scale(&s, ib, 1)};
    for (int g = 0; g < 4; g++) {
      const uint64_t grid = grid_of(&b, ib, g);
      const float delta = nibble(&b, ib, g) & 8 ? -IQ1_DELTA : IQ1_DELTA;
      for (int j = 0; j < 8; j++) *y++ = dl[g / 2] * ((float)bq_grid_i8(grid, j) + delta);
    }
  }
}

BQ_REF_ROW_KERNELS(iq1_m, QK_K)

/* Per super-block two exact integer sums over half sub-blocks, weighted by (2s + 1): sumi1 of
 * grid * q8, and sumi2 of (+-1) * (sum of q8) per group for the delta; then
 * sumf += (D * yd) * ((float)sumi1 + 0.125f * (float)sumi2). The result is sumf. State: acc[0]. */
BQ_DOT_PROTO(iq1_m, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_iq1_m a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    const iq1m_scales s = read_scales(&a);
    int32_t sumi1 = 0, sumi2 = 0;
    for (int ib = 0; ib < 8; ib++) {
      for (int g = 0; g < 4; g++) {
        const uint64_t grid = grid_of(&a, ib, g);
        const int8_t *q8 = b.qs + 32 * ib + 8 * g;
        int32_t lsum1 = 0, lsum2 = 0;
        for (int j = 0; j < 8; j++) {
          lsum1 += q8[j] * bq_grid_i8(grid, j);
          lsum2 += q8[j];
        }
        const int32_t ls = scale(&s, ib, g / 2);
        sumi1 += ls * lsum1;
        sumi2 += ls * (nibble(&a, ib, g) & 8 ? -lsum2 : lsum2);
      }
    }
    sumf += s.d * b.d * ((float)sumi1 + IQ1_DELTA * (float)sumi2);
  }
  acc[0] = sumf;
  return BQ_OK;
}
