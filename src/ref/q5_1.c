/* Q5_1 reference: quantize_row_q5_1_ref, dequantize_row_q5_1, ggml_vec_dot_q5_1_q8_1_generic.
 * Codes are 0..31 with no offset: x = q * d + m. */
#include "../internal.h"

static_assert(BQ_BLK_q5_1 == BQ_BLK_q8_1, "a q5_1 block pairs with one q8_1 block");

BQ_QUANTIZE_PROTO(q5_1, __ref) {
  if (n % BQ_BLK_q5_1) return BQ_EINVAL;
  block_q5_1 *yb = y;
  for (size_t i = 0; i < n / BQ_BLK_q5_1; i++, x += BQ_BLK_q5_1) {
    float min = 3.402823466e+38f, max = -3.402823466e+38f;
    for (int j = 0; j < BQ_BLK_q5_1; j++) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = bq_div(bq_sub(max, min), 31); /* all-Inf block: x86-64's negative NaN */
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q5_1 b;
    b.d = bq_fp32_to_fp16(d);
    b.m = bq_fp32_to_fp16(min);
    uint32_t qh = 0;
    for (int j = 0; j < BQ_BLK_q5_1 / 2; j++) {
      const uint8_t q0 = bq_cvt_u8((x[j] - min) * id + 0.5f); /* no clamp, as in ggml */
      const uint8_t q1 = bq_cvt_u8((x[j + BQ_BLK_q5_1 / 2] - min) * id + 0.5f);
      b.qs[j] = (uint8_t)((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= (uint32_t)((q0 & 0x10) >> 4) << j;
      qh |= (uint32_t)((q1 & 0x10) >> 4) << (j + BQ_BLK_q5_1 / 2);
    }
    memcpy(b.qh, &qh, 4);
    memcpy(&yb[i], &b, sizeof b);
  }
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q5_1, __ref) {
  if (n % BQ_BLK_q5_1) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / BQ_BLK_q5_1; i++, p += BQ_BYTES(q5_1), y += BQ_BLK_q5_1) {
    const float d = bq_h2f(bq_rd16(p + BQ_OFF(q5_1, d))), m = bq_h2f(bq_rd16(p + BQ_OFF(q5_1, m)));
    const uint32_t qh = bq_rd32(p + BQ_OFF(q5_1, qh));
    for (int j = 0; j < BQ_BLK_q5_1 / 2; j++) {
      const int h0 = (qh >> j) & 1, h1 = (qh >> (j + BQ_BLK_q5_1 / 2)) & 1;
      y[j] = (float)((p[BQ_OFF(q5_1, qs) + j] & 0x0F) | (h0 << 4)) * d + m;
      y[j + BQ_BLK_q5_1 / 2] = (float)((p[BQ_OFF(q5_1, qs) + j] >> 4) | (h1 << 4)) * d + m;
    }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q5_1, q8_1, __ref) {
  if (n % BQ_BLK_q5_1) return BQ_EINVAL;
  const uint8_t *a = x, *b = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q5_1; i++, a += BQ_BYTES(q5_1), b += BQ_BYTES(q8_1)) {
    const uint32_t qh = bq_rd32(a + BQ_OFF(q5_1, qh));
    int sumi0 = 0, sumi1 = 0;
    for (int j = 0; j < BQ_BLK_q5_1 / 2; j++) {
      const int h0 = (qh >> j) & 1, h1 = (qh >> (j + BQ_BLK_q5_1 / 2)) & 1;
      sumi0 += ((a[BQ_OFF(q5_1, qs) + j] & 0x0F) | (h0 << 4)) * (int8_t)b[BQ_OFF(q8_1, qs) + j];
      sumi1 += ((a[BQ_OFF(q5_1, qs) + j] >> 4) | (h1 << 4)) *
               (int8_t)b[BQ_OFF(q8_1, qs) + j + BQ_BLK_q5_1 / 2];
    }
    const float dd = bq_h2f(bq_rd16(a + BQ_OFF(q5_1, d))) * bq_h2f(bq_rd16(b + BQ_OFF(q8_1, d)));
    sumf += dd * (float)(sumi0 + sumi1) +
            bq_h2f(bq_rd16(a + BQ_OFF(q5_1, m))) * bq_h2f(bq_rd16(b + BQ_OFF(q8_1, s)));
  }
  acc[0] = sumf;
  return BQ_OK;
}

BQ_DOT_PROTO(q5_1, f32, __ref) {
  if (n % BQ_BLK_q5_1) return BQ_EINVAL;
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q5_1; i++, a += BQ_BYTES(q5_1), v += BQ_BLK_q5_1) {
    const float d = bq_h2f(bq_rd16(a + BQ_OFF(q5_1, d))), m = bq_h2f(bq_rd16(a + BQ_OFF(q5_1, m)));
    const uint32_t qh = bq_rd32(a + BQ_OFF(q5_1, qh));
    for (int j = 0; j < BQ_BLK_q5_1; j++) {
      const int lo = j < BQ_BLK_q5_1 / 2 ? (a[BQ_OFF(q5_1, qs) + j] & 0x0F)
                                         : (a[BQ_OFF(q5_1, qs) + j - BQ_BLK_q5_1 / 2] >> 4);
      const int q = lo | (int)(((qh >> j) & 1) << 4);
      sumf += ((float)q * d + m) * v[j];
    }
  }
  acc[0] = sumf;
  return BQ_OK;
}
