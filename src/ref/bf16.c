/* BF16: the top half of a binary32 (ggml_fp32_to_bf16_row_ref / ggml_bf16_to_fp32_row). */
#include "../internal.h"

BQ_QUANTIZE_PROTO(bf16, __ref) {
  for (size_t i = 0; i < n; i++) bq_wr16((uint8_t *)y + 2 * i, bq_fp32_to_bf16(x[i]));
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(bf16, __ref) {
  for (size_t i = 0; i < n; i++) y[i] = bq_bf16_to_fp32(bq_rd16((const uint8_t *)x + 2 * i));
  return BQ_OK;
}

/* Sequential sum of x[j] * y[j] in element order. */
BQ_DOT_PROTO(bf16, f32, __ref) {
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t j = 0; j < n; j++) sumf += bq_bf16_to_fp32(bq_rd16(a + 2 * j)) * v[j];
  acc[0] = sumf;
  return BQ_OK;
}
