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

/* ggml's generic ggml_vec_dot_f32: each product x[j] * y[j] in float, added in element order into
 * a double (ggml_float), rounded to float at the end. The double lives in the first 8 bytes of the
 * dot state (acc[0..1], zero when the state is), and the pair's own sum rounds it. */
BQ_DOT_PROTO(f32, f32, __ref) {
  const uint8_t *a = x;
  const float *v = y;
  double sumf;
  memcpy(&sumf, acc, sizeof sumf);
  for (size_t j = 0; j < n; j++) sumf += (double)(bq_float(bq_rd32(a + 4 * j)) * v[j]);
  memcpy(acc, &sumf, sizeof sumf);
  return BQ_OK;
}

BQ_DOT_SUM_PROTO(f32, f32, __ref) {
  double sumf;
  memcpy(&sumf, acc, sizeof sumf);
  return (float)sumf;
}
