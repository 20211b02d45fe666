/* Q1_0 reference: quantize_row_q1_0_ref, dequantize_row_q1_0, ggml_vec_dot_q1_0_q8_0_generic.
 *
 * One sign bit per element under one fp16 scale: d = (sum of |x| in element order) / 128, bit j
 * set when x[j] >= 0 (so -0 sets it and NaN clears it); an element decodes to d or -d. The sum and
 * the division use x86-64's NaN results (fp.h): a NaN |x| makes d NaN, and its fp16 keeps only the
 * sign, which fabsf made positive, so such a block's d is 0x7E00. */
#include "../kquants.h" /* BQ_REF_ROW_KERNELS */

enum { QK = BQ_BLK_q1_0, NQ8 = BQ_BLK_q1_0 / BQ_BLK_q8_0 };
static_assert(NQ8 == 4, "a Q1_0 block spans four Q8_0 blocks");

BQ_QUANTIZE_PROTO(q1_0, __ref) {
  if (n % QK) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK; i++, x += QK) {
    block_q1_0 b;
    float sum = 0.0f;
    for (int j = 0; j < QK; j++) sum = bq_add(sum, fabsf(x[j]));
    b.d = bq_fp32_to_fp16(bq_div(sum, (float)QK));
    memset(b.qs, 0, sizeof b.qs);
    for (int j = 0; j < QK; j++)
      if (x[j] >= 0.0f) b.qs[j / 8] |= (uint8_t)(1u << j % 8);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_q1_0 b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d), neg = -d;
  for (int j = 0; j < QK; j++) y[j] = b.qs[j / 8] >> j % 8 & 1 ? d : neg;
}

BQ_REF_ROW_KERNELS(q1_0, QK)

/* Per block: for each of its four Q8_0 blocks k, the integer sum of +-q8 (+ where the bit is set),
 * sumi += dy_k * (float)sum_k in a float that starts at 0; then sumf += d * sumi, one running sum
 * in acc[0]. */
BQ_DOT_PROTO(q1_0, q8_0, __ref) {
  if (n % QK) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK; i++) {
    block_q1_0 a;
    block_q8_0 b[NQ8];
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(b, (const uint8_t *)y + NQ8 * i * sizeof b[0], sizeof b);
    float sumi = 0.0f;
    for (int k = 0; k < NQ8; k++) {
      int s = 0;
      for (int j = 0; j < BQ_BLK_q8_0; j++) {
        const int e = k * BQ_BLK_q8_0 + j;
        s += a.qs[e / 8] >> e % 8 & 1 ? b[k].qs[j] : -b[k].qs[j];
      }
      sumi += bq_h2f(b[k].d) * (float)s;
    }
    sumf += bq_h2f(a.d) * sumi;
  }
  acc[0] = sumf;
  return BQ_OK;
}
