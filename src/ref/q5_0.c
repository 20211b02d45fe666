/* Q5_0 reference: quantize_row_q5_0_ref, dequantize_row_q5_0, ggml_vec_dot_q5_0_q8_0_generic.
 * The 5th bit of element j (0..31) is bit j of the little-endian uint32 qh. */
#include "../internal.h"

static_assert(BQ_BLK_q5_0 == BQ_BLK_q8_0, "a q5_0 block pairs with one q8_0 block");

BQ_QUANTIZE_PROTO(q5_0, __ref) {
  if (n % BQ_BLK_q5_0) return BQ_EINVAL;
  block_q5_0 *yb = y;
  for (size_t i = 0; i < n / BQ_BLK_q5_0; i++, x += BQ_BLK_q5_0) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < BQ_BLK_q5_0; j++) {
      if (amax < fabsf(x[j])) {
        amax = fabsf(x[j]);
        max = x[j];
      }
    }
    const float d = max / -16;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q5_0 b;
    b.d = bq_fp32_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < BQ_BLK_q5_0 / 2; j++) {
      const int c0 = bq_cvt_i8(x[j] * id + 16.5f);
      const int c1 = bq_cvt_i8(x[j + BQ_BLK_q5_0 / 2] * id + 16.5f);
      const uint8_t q0 = (uint8_t)(c0 < 31 ? c0 : 31);
      const uint8_t q1 = (uint8_t)(c1 < 31 ? c1 : 31);
      b.qs[j] = (uint8_t)((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= (uint32_t)((q0 & 0x10) >> 4) << j;
      qh |= (uint32_t)((q1 & 0x10) >> 4) << (j + BQ_BLK_q5_0 / 2);
    }
    memcpy(b.qh, &qh, 4);
    memcpy(&yb[i], &b, sizeof b);
  }
  return BQ_OK;
}

BQ_DEQUANTIZE_PROTO(q5_0, __ref) {
  if (n % BQ_BLK_q5_0) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / BQ_BLK_q5_0; i++, p += BQ_BYTES(q5_0), y += BQ_BLK_q5_0) {
    const float d = bq_h2f(bq_rd16(p + BQ_OFF(q5_0, d)));
    const uint32_t qh = bq_rd32(p + BQ_OFF(q5_0, qh));
    for (int j = 0; j < BQ_BLK_q5_0 / 2; j++) {
      const int h0 = (qh >> j) & 1, h1 = (qh >> (j + BQ_BLK_q5_0 / 2)) & 1;
      y[j] = (float)(((p[BQ_OFF(q5_0, qs) + j] & 0x0F) | (h0 << 4)) - 16) * d;
      y[j + BQ_BLK_q5_0 / 2] = (float)(((p[BQ_OFF(q5_0, qs) + j] >> 4) | (h1 << 4)) - 16) * d;
    }
  }
  return BQ_OK;
}

BQ_DOT_PROTO(q5_0, q8_0, __ref) {
  if (n % BQ_BLK_q5_0) return BQ_EINVAL;
  const uint8_t *a = x, *b = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q5_0; i++, a += BQ_BYTES(q5_0), b += BQ_BYTES(q8_0)) {
    const uint32_t qh = bq_rd32(a + BQ_OFF(q5_0, qh));
    int sumi0 = 0, sumi1 = 0;
    for (int j = 0; j < BQ_BLK_q5_0 / 2; j++) {
      const int h0 = (qh >> j) & 1, h1 = (qh >> (j + BQ_BLK_q5_0 / 2)) & 1;
      sumi0 +=
          (((a[BQ_OFF(q5_0, qs) + j] & 0x0F) | (h0 << 4)) - 16) * (int8_t)b[BQ_OFF(q8_0, qs) + j];
      sumi1 += (((a[BQ_OFF(q5_0, qs) + j] >> 4) | (h1 << 4)) - 16) *
               (int8_t)b[BQ_OFF(q8_0, qs) + j + BQ_BLK_q5_0 / 2];
    }
    sumf += (bq_h2f(bq_rd16(a + BQ_OFF(q5_0, d))) * bq_h2f(bq_rd16(b + BQ_OFF(q8_0, d)))) *
            (float)(sumi0 + sumi1);
  }
  acc[0] = sumf;
  return BQ_OK;
}

BQ_DOT_PROTO(q5_0, f32, __ref) {
  if (n % BQ_BLK_q5_0) return BQ_EINVAL;
  const uint8_t *a = x;
  const float *v = y;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_q5_0; i++, a += BQ_BYTES(q5_0), v += BQ_BLK_q5_0) {
    const float d = bq_h2f(bq_rd16(a + BQ_OFF(q5_0, d)));
    const uint32_t qh = bq_rd32(a + BQ_OFF(q5_0, qh));
    for (int j = 0; j < BQ_BLK_q5_0; j++) {
      const int lo = j < BQ_BLK_q5_0 / 2 ? (a[BQ_OFF(q5_0, qs) + j] & 0x0F)
                                         : (a[BQ_OFF(q5_0, qs) + j - BQ_BLK_q5_0 / 2] >> 4);
      const int q = lo | (int)(((qh >> j) & 1) << 4);
      sumf += ((float)(q - 16) * d) * v[j];
    }
  }
  acc[0] = sumf;
  return BQ_OK;
}
