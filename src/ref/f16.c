/* F16: IEEE binary16 (ggml_fp32_to_fp16_row / ggml_fp16_to_fp32_row). */
#include "../internal.h"

BQ_QUANTIZE_PROTO(f16, __ref) {
  for (size_t i = 0; i < n; i++) bq_wr16((uint8_t *)y + 2 * i, bq_fp32_to_fp16(x[i]));
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(f16, __ref) {
  for (size_t i = 0; i < n; i++) y[i] = bq_fp16_to_fp32(bq_rd16((const uint8_t *)x + 2 * i));
  return BQ_OK;
}

/* Sequential sum of x[j] * y[j] in element order. */
BQ_DOT_PROTO(f16, f32, __ref) {
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t j = 0; j < n; j++) sumf += bq_fp16_to_fp32(bq_rd16(a + 2 * j)) * v[j];
  acc[0] = sumf;
  return BQ_OK;
}
