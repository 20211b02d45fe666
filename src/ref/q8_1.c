/* Q8_1 reference: quantize_row_q8_1_ref. ggml has no Q8_1 dequantize; blockquant decodes qs * d. */
#include "../internal.h"

void bq_q8_1_quantize_block__ref(const float *x, void *out) {
  float amax = 0.0f;
  for (int j = 0; j < BQ_BLK_q8_1; j++) {
    const float a = fabsf(x[j]);
    amax = amax > a ? amax : a;
  }
  const float d = bq_div(amax, 127); /* a NaN amax keeps its sign into the halves */
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  block_q8_1 b;
  b.d = bq_fp32_to_fp16(d);
  int sum = 0;
  for (int j = 0; j < BQ_BLK_q8_1; j++) {
    b.qs[j] = (int8_t)bq_cvt_u8(roundf(x[j] * id));
    sum += b.qs[j];
  }
  b.s = bq_fp32_to_fp16(bq_mul((float)sum, d));
  memcpy(out, &b, sizeof b);
}

BQ_QUANTIZE_PROTO(q8_1, __ref) {
  if (n % BQ_BLK_q8_1) return BQ_EINVAL;
  for (size_t i = 0; i < n / BQ_BLK_q8_1; i++)
    bq_q8_1_quantize_block__ref(x + i * BQ_BLK_q8_1, (uint8_t *)y + i * BQ_BYTES(q8_1));
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q8_1, __ref) {
  if (n % BQ_BLK_q8_1) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / BQ_BLK_q8_1; i++, p += BQ_BYTES(q8_1), y += BQ_BLK_q8_1) {
    const float d = bq_h2f(bq_rd16(p + BQ_OFF(q8_1, d)));
    for (int j = 0; j < BQ_BLK_q8_1; j++) y[j] = (float)(int8_t)p[BQ_OFF(q8_1, qs) + j] * d;
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q8_1, f32, __ref) {
  if (n % BQ_BLK_q8_1) return BQ_EINVAL;
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q8_1; i++, a += BQ_BYTES(q8_1), v += BQ_BLK_q8_1) {
    const float d = bq_h2f(bq_rd16(a + BQ_OFF(q8_1, d)));
    for (int j = 0; j < BQ_BLK_q8_1; j++)
      sumf += ((float)(int8_t)a[BQ_OFF(q8_1, qs) + j] * d) * v[j];
  }
  acc[0] = sumf;
  return BQ_OK;
}
