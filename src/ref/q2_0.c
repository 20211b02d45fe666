/* Q2_0 reference: quantize_row_q2_0_ref, dequantize_row_q2_0, ggml_vec_dot_q2_0_q8_0_generic.
 *
 * Four 2-bit codes per byte under one fp16 scale d = max |x|: code = (int)roundf(x / d) + 1
 * clamped to 0..3, decoding to (code - 1) * d. Since |x| <= d, code 3 (2d) is never written for
 * finite blocks. ggml multiplies by id = 1 / d (0 when d is 0); where that overflows (d below
 * 2^-128) every x * id is +-Inf or NaN, and the (int) cast of those, INT32_MIN on x86-64
 * (bq_cvt_i32), clamps to code 0: such a block is all -d. A NaN element, and any element of a block
 * whose max is Inf (Inf * 0 or x * 0), takes code 0 or 1 the same way. */
#include "../kquants.h" /* BQ_REF_ROW_KERNELS */

enum { QK = BQ_BLK_q2_0, NQ8 = BQ_BLK_q2_0 / BQ_BLK_q8_0 };
static_assert(NQ8 == 2, "a Q2_0 block spans two Q8_0 blocks");

/* C's roundf (half away from zero) of v, then ggml's (int) cast and code clamp. */
static inline int code(float v) {
  float r = v;
  if (fabsf(v) < 0x1p23f) { /* larger floats are integers already (and NaN stays NaN) */
    r = truncf(v);          /* exact, and so is v - r */
    if (fabsf(v - r) >= 0.5f) r += v < 0 ? -1.0f : 1.0f;
  }
  const int32_t q = bq_cvt_i32(r);
  return q < -1 ? 0 : q > 2 ? 3 : q + 1;
}

BQ_QUANTIZE_PROTO(q2_0, __ref) {
  if (n % QK) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK; i++, x += QK) {
    block_q2_0 b;
    float amax = 0.0f;
    for (int j = 0; j < QK; j++)
      if (fabsf(x[j]) > amax) amax = fabsf(x[j]);
    const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
    b.d = bq_fp32_to_fp16(amax);
    memset(b.qs, 0, sizeof b.qs);
    for (int j = 0; j < QK; j++) b.qs[j / 4] |= (uint8_t)(code(x[j] * id) << 2 * (j % 4));
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_q2_0 b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int j = 0; j < QK; j++) y[j] = (float)((b.qs[j / 4] >> 2 * (j % 4) & 3) - 1) * d;
}

BQ_REF_ROW_KERNELS(q2_0, QK)

/* Per block: for each of its two Q8_0 blocks k, the integer sum of (code - 1) * q8, sumi += dy_k *
 * (float)sum_k in a float that starts at 0; then sumf += d * sumi, one running sum in acc[0]. */
BQ_DOT_PROTO(q2_0, q8_0, __ref) {
  if (n % QK) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK; i++) {
    block_q2_0 a;
    block_q8_0 b[NQ8];
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(b, (const uint8_t *)y + NQ8 * i * sizeof b[0], sizeof b);
    float sumi = 0.0f;
    for (int k = 0; k < NQ8; k++) {
      int s = 0;
      for (int j = 0; j < BQ_BLK_q8_0; j++) {
        const int e = k * BQ_BLK_q8_0 + j;
        s += ((a.qs[e / 4] >> 2 * (e % 4) & 3) - 1) * b[k].qs[j];
      }
      sumi += bq_h2f(b[k].d) * (float)s;
    }
    sumf += bq_h2f(a.d) * sumi;
  }
  acc[0] = sumf;
  return BQ_OK;
}
