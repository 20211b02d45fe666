/* TQ2_0 reference: quantize_row_tq2_0_ref, dequantize_row_tq2_0, ggml_vec_dot_tq2_0_q8_K_generic.
 *
 * d = max |x| of the super-block (ggml's MAX(a, b) = a > b ? a : b, so a NaN resets the running max
 * to the next |x|); trit = lroundf(x / d) + 1, stored as its low two bits (bq_tq_trit pins what
 * x86-64 gives for NaN and out-of-range values). Code 3 decodes to 2d; the quantizer writes it
 * only for such inputs. */
#include "../iquants4.h"

/* Element e's code 0..3 (the Q2_K plane mapping). */
static inline int code(const block_tq2_0 *b, int e) {
  return b->qs[32 * (e / 128) + e % 32] >> 2 * (e % 128 / 32) & 3;
}

BQ_QUANTIZE_PROTO(tq2_0, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    const float *xb = x + i * QK_K;
    block_tq2_0 b;
    float amax = 0;
    for (int e = 0; e < QK_K; e++) amax = amax > fabsf(xb[e]) ? amax : fabsf(xb[e]);
    const float id = amax != 0 ? 1.0f / amax : 0.0f;
    b.d = bq_fp32_to_fp16(amax);
    memset(b.qs, 0, sizeof b.qs);
    for (int e = 0; e < QK_K; e++)
      b.qs[32 * (e / 128) + e % 32] |=
          (uint8_t)((bq_tq_trit(xb[e] * id) & 3) << 2 * (e % 128 / 32));
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_tq2_0 b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int e = 0; e < QK_K; e++) y[e] = (float)(code(&b, e) - 1) * d;
}

BQ_REF_ROW_KERNELS(tq2_0, QK_K)

/* Per super-block: sumf += (float)sumi * (yd * xd), one running sum in acc[0]. */
BQ_DOT_PROTO(tq2_0, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_tq2_0 a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int32_t sumi = 0;
    for (int e = 0; e < QK_K; e++) sumi += b.qs[e] * (code(&a, e) - 1);
    const float d = b.d * bq_h2f(a.d);
    sumf += (float)sumi * d;
  }
  acc[0] = sumf;
  return BQ_OK;
}
