/* Q5_1 reference: quantize_row_q5_1_ref, dequantize_row_q5_1, ggml_vec_dot_q5_1_q8_1_generic.
 * Codes are 0..31 with no offset: x = q * d + m. */
#include "../internal.h"

BQ_QUANTIZE_PROTO(q5_1, __ref) {
  if (n % QK) return BQ_EINVAL;
  block_q5_1 *yb = y;
  for (size_t i = 0; i < n / QK; i++, x += QK) {
    float min = 3.402823466e+38f, max = -3.402823466e+38f;
    for (int j = 0; j < QK; j++) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / 31;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q5_1 b;
    b.d = bq_fp32_to_fp16(d);
    b.m = bq_fp32_to_fp16(min);
    uint32_t qh = 0;
    for (int j = 0; j < QK / 2; j++) {
      const uint8_t q0 = bq_cvt_u8((x[j] - min) * id + 0.5f); /* no clamp, as in ggml */
      const uint8_t q1 = bq_cvt_u8((x[j + QK / 2] - min) * id + 0.5f);
      b.qs[j] = (uint8_t)((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= (uint32_t)((q0 & 0x10) >> 4) << j;
      qh |= (uint32_t)((q1 & 0x10) >> 4) << (j + QK / 2);
    }
    memcpy(b.qh, &qh, 4);
    memcpy(&yb[i], &b, sizeof b);
  }
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q5_1, __ref) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / QK; i++, p += 24, y += QK) {
    const float d = bq_h2f(bq_rd16(p)), m = bq_h2f(bq_rd16(p + 2));
    const uint32_t qh = bq_rd32(p + 4);
    for (int j = 0; j < QK / 2; j++) {
      const int h0 = (qh >> j) & 1, h1 = (qh >> (j + QK / 2)) & 1;
      y[j] = (float)((p[8 + j] & 0x0F) | (h0 << 4)) * d + m;
      y[j + QK / 2] = (float)((p[8 + j] >> 4) | (h1 << 4)) * d + m;
    }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q5_1, q8_1, __ref) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *a = x, *b = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK; i++, a += 24, b += 36) {
    const uint32_t qh = bq_rd32(a + 4);
    int sumi0 = 0, sumi1 = 0;
    for (int j = 0; j < QK / 2; j++) {
      const int h0 = (qh >> j) & 1, h1 = (qh >> (j + QK / 2)) & 1;
      sumi0 += ((a[8 + j] & 0x0F) | (h0 << 4)) * (int8_t)b[4 + j];
      sumi1 += ((a[8 + j] >> 4) | (h1 << 4)) * (int8_t)b[4 + j + QK / 2];
    }
    const float dd = bq_h2f(bq_rd16(a)) * bq_h2f(bq_rd16(b));
    sumf += dd * (float)(sumi0 + sumi1) + bq_h2f(bq_rd16(a + 2)) * bq_h2f(bq_rd16(b + 2));
  }
  acc[0] = sumf;
  return BQ_OK;
}

BQ_DOT_PROTO(q5_1, f32, __ref) {
  if (n % QK) return BQ_EINVAL;
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK; i++, a += 24, v += QK) {
    const float d = bq_h2f(bq_rd16(a)), m = bq_h2f(bq_rd16(a + 2));
    const uint32_t qh = bq_rd32(a + 4);
    for (int j = 0; j < QK; j++) {
      const int lo = j < QK / 2 ? (a[8 + j] & 0x0F) : (a[8 + j - QK / 2] >> 4);
      const int q = lo | (int)(((qh >> j) & 1) << 4);
      sumf += ((float)q * d + m) * v[j];
    }
  }
  acc[0] = sumf;
  return BQ_OK;
}
