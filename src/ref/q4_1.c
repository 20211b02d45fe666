/* Q4_1 reference: quantize_row_q4_1_ref, dequantize_row_q4_1, ggml_vec_dot_q4_1_q8_1_generic. */
#include "../internal.h"

static_assert(BQ_BLK_q4_1 == BQ_BLK_q8_1, "a q4_1 block pairs with one q8_1 block");

BQ_QUANTIZE_PROTO(q4_1, __ref) {
  if (n % BQ_BLK_q4_1) return BQ_EINVAL;
  block_q4_1 *yb = y;
  for (size_t i = 0; i < n / BQ_BLK_q4_1; i++, x += BQ_BLK_q4_1) {
    float min = 3.402823466e+38f, max = -3.402823466e+38f;
    for (int j = 0; j < BQ_BLK_q4_1; j++) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = bq_div(bq_sub(max, min), 15); /* all-Inf block: x86-64's negative NaN */
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q4_1 b;
    b.d = bq_fp32_to_fp16(d);
    b.m = bq_fp32_to_fp16(min);
    for (int j = 0; j < BQ_BLK_q4_1 / 2; j++) {
      const int c0 = bq_cvt_i8((x[j] - min) * id + 0.5f);
      const int c1 = bq_cvt_i8((x[j + BQ_BLK_q4_1 / 2] - min) * id + 0.5f);
      const uint8_t q0 = (uint8_t)(c0 < 15 ? c0 : 15);
      const uint8_t q1 = (uint8_t)(c1 < 15 ? c1 : 15);
      b.qs[j] = (uint8_t)((q0 & 0x0F) | (uint8_t)(q1 << 4));
    }
    memcpy(&yb[i], &b, sizeof b);
  }
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q4_1, __ref) {
  if (n % BQ_BLK_q4_1) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / BQ_BLK_q4_1; i++, p += BQ_BYTES(q4_1), y += BQ_BLK_q4_1) {
    const float d = bq_h2f(bq_rd16(p + BQ_OFF(q4_1, d))), m = bq_h2f(bq_rd16(p + BQ_OFF(q4_1, m)));
    for (int j = 0; j < BQ_BLK_q4_1 / 2; j++) {
      y[j] = (float)(p[BQ_OFF(q4_1, qs) + j] & 0x0F) * d + m;
      y[j + BQ_BLK_q4_1 / 2] = (float)(p[BQ_OFF(q4_1, qs) + j] >> 4) * d + m;
    }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q4_1, q8_1, __ref) {
  if (n % BQ_BLK_q4_1) return BQ_EINVAL;
  const uint8_t *a = x, *b = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q4_1; i++, a += BQ_BYTES(q4_1), b += BQ_BYTES(q8_1)) {
    int sumi0 = 0, sumi1 = 0;
    for (int j = 0; j < BQ_BLK_q4_1 / 2; j++) {
      sumi0 += (a[BQ_OFF(q4_1, qs) + j] & 0x0F) * (int8_t)b[BQ_OFF(q8_1, qs) + j];
      sumi1 += (a[BQ_OFF(q4_1, qs) + j] >> 4) * (int8_t)b[BQ_OFF(q8_1, qs) + j + BQ_BLK_q4_1 / 2];
    }
    const float dd = bq_h2f(bq_rd16(a + BQ_OFF(q4_1, d))) * bq_h2f(bq_rd16(b + BQ_OFF(q8_1, d)));
    sumf += dd * (float)(sumi0 + sumi1) +
            bq_h2f(bq_rd16(a + BQ_OFF(q4_1, m))) * bq_h2f(bq_rd16(b + BQ_OFF(q8_1, s)));
  }
  acc[0] = sumf;
  return BQ_OK;
}

BQ_DOT_PROTO(q4_1, f32, __ref) {
  if (n % BQ_BLK_q4_1) return BQ_EINVAL;
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q4_1; i++, a += BQ_BYTES(q4_1), v += BQ_BLK_q4_1) {
    const float d = bq_h2f(bq_rd16(a + BQ_OFF(q4_1, d))), m = bq_h2f(bq_rd16(a + BQ_OFF(q4_1, m)));
    for (int j = 0; j < BQ_BLK_q4_1; j++) {
      const int q = j < BQ_BLK_q4_1 / 2 ? (a[BQ_OFF(q4_1, qs) + j] & 0x0F)
                                        : (a[BQ_OFF(q4_1, qs) + j - BQ_BLK_q4_1 / 2] >> 4);
      sumf += ((float)q * d + m) * v[j];
    }
  }
  acc[0] = sumf;
  return BQ_OK;
}
