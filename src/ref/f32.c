/* F32: raw little-endian binary32; quantize and dequantize are copies. */
#include "../internal.h"

BQ_QUANTIZE_PROTO(f32, __ref) {
  memcpy(y, x, n * 4);
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(f32, __ref) {
  memcpy(y, x, n * 4);
  return BQ_OK;
}

/* Sequential sum of x[j] * y[j] in element order. */
BQ_DOT_PROTO(f32, f32, __ref) {
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t j = 0; j < n; j++) sumf += bq_float(bq_rd32(a + 4 * j)) * v[j];
  acc[0] = sumf;
  return BQ_OK;
}
