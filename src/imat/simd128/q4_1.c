/* Q4_1 with importance weights in SIMD128: src/imat/q4_1.c's steps for four blocks at a time,
 * their affine fits in the four lanes of bq_affine_fit4. */
#include "search.h"

static void group(const float *x, const float *qw, float sigma2, int nb, uint8_t *out) {
  uint8_t L[4][32];
  float d[4], m[4];
  bq_affine_blocks4(x, qw, sigma2, 15, L, d, m);
  for (int j = 0; j < nb; j++) {
    uint8_t *o = out + j * sizeof(block_q4_1);
    if (d[j] != d[j] || m[j] != m[j]) { /* its NaN's sign: the reference's */
      bq_q4_1_imat_block__ref(x + 32 * j, qw + 32 * j, sigma2, o);
      continue;
    }
    block_q4_1 b;
    b.d = bq_fp32_to_fp16(d[j]);
    b.m = bq_fp32_to_fp16(m[j]);
    for (int i = 0; i < 16; i++) b.qs[i] = (uint8_t)(L[j][i] | L[j][i + 16] << 4);
    memcpy(o, &b, sizeof b);
  }
}

BQ_QUANTIZE_ROWS_PROTO(q4_1, __simd128) {
  BQ_IMAT_ROWS(32, bq_q4_1_quantize,
               bq_imat_rows32_simd(x, y, rows, cols, qw, sizeof(block_q4_1), group,
                                   bq_q4_1_imat_block__ref));
}
