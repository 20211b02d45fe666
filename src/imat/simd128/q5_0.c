/* Q5_0 with importance weights in SIMD128: src/imat/q5_0.c's steps for four blocks at a time,
 * their symmetric fits in the four lanes of bq_symmetric_fit4. */
#include "search.h"

static void group(const float *x, const float *qw, float sigma2, int nb, uint8_t *out) {
  uint8_t L[4][32];
  float d[4];
  bq_symmetric_blocks4(x, qw, sigma2, 16, L, d);
  for (int j = 0; j < nb; j++) {
    uint8_t *o = out + j * sizeof(block_q5_0);
    if (d[j] != d[j]) { /* its NaN's sign: the reference's */
      bq_q5_0_imat_block__ref(x + 32 * j, qw + 32 * j, sigma2, o);
      continue;
    }
    block_q5_0 b;
    b.d = bq_fp32_to_fp16(d[j]);
    uint32_t qh = 0;
    for (int i = 0; i < 16; i++) {
      b.qs[i] = (uint8_t)((L[j][i] & 0xF) | (L[j][i + 16] & 0xF) << 4);
      qh |= (uint32_t)(L[j][i] >> 4) << i | (uint32_t)(L[j][i + 16] >> 4) << (i + 16);
    }
    memcpy(b.qh, &qh, 4);
    memcpy(o, &b, sizeof b);
  }
}

BQ_QUANTIZE_ROWS_PROTO(q5_0, __simd128) {
  BQ_IMAT_ROWS(32, bq_q5_0_quantize,
               bq_imat_rows32_simd(x, y, rows, cols, qw, sizeof(block_q5_0), group,
                                   bq_q5_0_imat_block__ref));
}
