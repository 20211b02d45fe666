/* Q4_0 reference: quantize_row_q4_0_ref, dequantize_row_q4_0, ggml_vec_dot_q4_0_q8_0_generic. */
#include "../internal.h"

static_assert(BQ_BLK_q4_0 == BQ_BLK_q8_0, "a q4_0 block pairs with one q8_0 block");

BQ_QUANTIZE_PROTO(q4_0, __ref) {
  if (n % BQ_BLK_q4_0) return BQ_EINVAL;
  block_q4_0 *yb = y;
  for (size_t i = 0; i < n / BQ_BLK_q4_0; i++, x += BQ_BLK_q4_0) {
    float amax = 0.0f, max = 0.0f; /* the signed value of the first element of largest |x| */
    for (int j = 0; j < BQ_BLK_q4_0; j++) {
      if (amax < fabsf(x[j])) {
        amax = fabsf(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q4_0 b;
    b.d = bq_fp32_to_fp16(d);
    for (int j = 0; j < BQ_BLK_q4_0 / 2; j++) {
      const int c0 = bq_cvt_i8(x[j] * id + 8.5f);
      const int c1 = bq_cvt_i8(x[j + BQ_BLK_q4_0 / 2] * id + 8.5f);
      const uint8_t q0 = (uint8_t)(c0 < 15 ? c0 : 15);
      const uint8_t q1 = (uint8_t)(c1 < 15 ? c1 : 15);
      b.qs[j] = (uint8_t)((q0 & 0x0F) | (uint8_t)(q1 << 4));
    }
    memcpy(&yb[i], &b, sizeof b);
  }
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q4_0, __ref) {
  if (n % BQ_BLK_q4_0) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / BQ_BLK_q4_0; i++, p += BQ_BYTES(q4_0), y += BQ_BLK_q4_0) {
    const float d = bq_h2f(bq_rd16(p + BQ_OFF(q4_0, d)));
    for (int j = 0; j < BQ_BLK_q4_0 / 2; j++) {
      y[j] = (float)((p[BQ_OFF(q4_0, qs) + j] & 0x0F) - 8) * d;
      y[j + BQ_BLK_q4_0 / 2] = (float)((p[BQ_OFF(q4_0, qs) + j] >> 4) - 8) * d;
    }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q4_0, q8_0, __ref) {
  if (n % BQ_BLK_q4_0) return BQ_EINVAL;
  const uint8_t *a = x, *b = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q4_0; i++, a += BQ_BYTES(q4_0), b += BQ_BYTES(q8_0)) {
    int sumi0 = 0, sumi1 = 0;
    for (int j = 0; j < BQ_BLK_q4_0 / 2; j++) {
      sumi0 += ((a[BQ_OFF(q4_0, qs) + j] & 0x0F) - 8) * (int8_t)b[BQ_OFF(q8_0, qs) + j];
      sumi1 +=
          ((a[BQ_OFF(q4_0, qs) + j] >> 4) - 8) * (int8_t)b[BQ_OFF(q8_0, qs) + j + BQ_BLK_q4_0 / 2];
    }
    sumf += ((float)(sumi0 + sumi1) * bq_h2f(bq_rd16(a + BQ_OFF(q4_0, d)))) *
            bq_h2f(bq_rd16(b + BQ_OFF(q8_0, d)));
  }
  acc[0] = sumf;
  return BQ_OK;
}

BQ_DOT_PROTO(q4_0, f32, __ref) {
  if (n % BQ_BLK_q4_0) return BQ_EINVAL;
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q4_0; i++, a += BQ_BYTES(q4_0), v += BQ_BLK_q4_0) {
    const float d = bq_h2f(bq_rd16(a + BQ_OFF(q4_0, d)));
    for (int j = 0; j < BQ_BLK_q4_0; j++) {
      const int q = j < BQ_BLK_q4_0 / 2 ? (a[BQ_OFF(q4_0, qs) + j] & 0x0F)
                                        : (a[BQ_OFF(q4_0, qs) + j - BQ_BLK_q4_0 / 2] >> 4);
      sumf += ((float)(q - 8) * d) * v[j];
    }
  }
  acc[0] = sumf;
  return BQ_OK;
}
