/* Q8_0 reference: quantize_row_q8_0_ref, dequantize_row_q8_0, ggml_vec_dot_q8_0_q8_0_generic. */
#include "../internal.h"

/* One Q8_0 block. Exposed to the SIMD kernels, which hand it blocks with NaN or Inf inputs, where
 * ggml's sequential max scan and cast rules are easiest to follow exactly in scalar code. */
void bq_q8_0_quantize_block__ref(const float *x, void *out) {
  float amax = 0.0f;
  for (int j = 0; j < BQ_BLK_q8_0; j++) {
    const float a = fabsf(x[j]);
    amax = amax > a ? amax : a; /* ggml's MAX(): a NaN is kept only until the next element */
  }
  const float d = bq_div(amax, 127); /* a NaN amax keeps its sign into the half */
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  block_q8_0 b;
  b.d = bq_fp32_to_fp16(d);
  for (int j = 0; j < BQ_BLK_q8_0; j++) b.qs[j] = (int8_t)bq_cvt_u8(roundf(x[j] * id));
  memcpy(out, &b, sizeof b);
}

BQ_QUANTIZE_PROTO(q8_0, __ref) {
  if (n % BQ_BLK_q8_0) return BQ_EINVAL;
  for (size_t i = 0; i < n / BQ_BLK_q8_0; i++)
    bq_q8_0_quantize_block__ref(x + i * BQ_BLK_q8_0, (uint8_t *)y + i * BQ_BYTES(q8_0));
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q8_0, __ref) {
  if (n % BQ_BLK_q8_0) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / BQ_BLK_q8_0; i++, p += BQ_BYTES(q8_0), y += BQ_BLK_q8_0) {
    const float d = bq_h2f(bq_rd16(p + BQ_OFF(q8_0, d)));
    for (int j = 0; j < BQ_BLK_q8_0; j++) y[j] = (float)(int8_t)p[BQ_OFF(q8_0, qs) + j] * d;
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q8_0, q8_0, __ref) {
  if (n % BQ_BLK_q8_0) return BQ_EINVAL;
  const uint8_t *a = x, *b = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q8_0; i++, a += BQ_BYTES(q8_0), b += BQ_BYTES(q8_0)) {
    int sumi = 0;
    for (int j = 0; j < BQ_BLK_q8_0; j++)
      sumi += (int8_t)a[BQ_OFF(q8_0, qs) + j] * (int8_t)b[BQ_OFF(q8_0, qs) + j];
    sumf +=
        (float)sumi * (bq_h2f(bq_rd16(a + BQ_OFF(q8_0, d))) * bq_h2f(bq_rd16(b + BQ_OFF(q8_0, d))));
  }
  acc[0] = sumf;
  return BQ_OK;
}

BQ_DOT_PROTO(q8_0, f32, __ref) {
  if (n % BQ_BLK_q8_0) return BQ_EINVAL;
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q8_0; i++, a += BQ_BYTES(q8_0), v += BQ_BLK_q8_0) {
    const float d = bq_h2f(bq_rd16(a + BQ_OFF(q8_0, d)));
    for (int j = 0; j < BQ_BLK_q8_0; j++)
      sumf += ((float)(int8_t)a[BQ_OFF(q8_0, qs) + j] * d) * v[j];
  }
  acc[0] = sumf;
  return BQ_OK;
}
