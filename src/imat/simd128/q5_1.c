/* Q5_1 with importance weights in SIMD128: src/imat/q5_1.c's steps for four blocks at a time,
 * their affine fits in the four lanes of bq_affine_fit4. */
#include "search.h"

static void group(const float *x, const float *qw, float sigma2, int nb, uint8_t *out) {
  v128_t xt[32], qt[32], wt[32], codes[32], scale, the_min;
  bq_fit4_load(x, 32, 32, xt);
  bq_fit4_load(qw, 32, 32, qt);
  bq_fit4_weights(xt, qt, 32, sigma2, wt);
  bq_affine_fit4(xt, wt, 32, 31, BQ_IMAT_RMIN, BQ_IMAT_RDELTA, BQ_IMAT_NSTEP, 0, &scale, &the_min,
                 codes);
  uint8_t L[4][32];
  bq_fit4_store_codes(codes, 32, L[0], 32);
  float d[4], m[4];
  wasm_v128_store(d, scale);
  wasm_v128_store(m, wasm_f32x4_neg(the_min));
  for (int j = 0; j < nb; j++) {
    uint8_t *o = out + j * sizeof(block_q5_1);
    if (d[j] != d[j] || m[j] != m[j]) { /* its NaN's sign: the reference's */
      bq_q5_1_imat_block__ref(x + 32 * j, qw + 32 * j, sigma2, o);
      continue;
    }
    block_q5_1 b;
    b.d = bq_fp32_to_fp16(d[j]);
    b.m = bq_fp32_to_fp16(m[j]);
    uint32_t qh = 0;
    for (int i = 0; i < 16; i++) {
      b.qs[i] = (uint8_t)((L[j][i] & 0xF) | (L[j][i + 16] & 0xF) << 4);
      qh |= (uint32_t)(L[j][i] >> 4) << i | (uint32_t)(L[j][i + 16] >> 4) << (i + 16);
    }
    memcpy(b.qh, &qh, 4);
    memcpy(o, &b, sizeof b);
  }
}

BQ_QUANTIZE_ROWS_PROTO(q5_1, __simd128) {
  BQ_IMAT_ROWS(32, bq_q5_1_quantize,
               bq_imat_rows32_simd(x, y, rows, cols, qw, sizeof(block_q5_1), group,
                                   bq_q5_1_imat_block__ref));
}
