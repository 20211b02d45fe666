/* IQ4_NL reference: dequantize_row_iq4_nl and ggml_vec_dot_iq4_nl_q8_0_generic. The quantizer,
 * with and without importance weights, is in src/imat/iq4.c. */
#include "../iquants4.h"

/* ggml-common.h kvalues_iq4nl at ggml d99724f2b141fed9e1a9f402213506c081433465 (SHA-256 of the 16
 * bytes: 61aa4754...74b46163, checked by the native test). */
const int8_t bq_kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

static void dequantize_block(const uint8_t *p, float *y) {
  block_iq4_nl b;
  memcpy(&b, p, sizeof b);
  bq_nl32_dequantize(b.qs, bq_kvalues_iq4nl, bq_h2f(b.d), y);
}

BQ_REF_ROW_KERNELS(iq4_nl, 32)

int bq_nl32_dot_q8_0(const void *x, size_t block_bytes, size_t qs_offset, const int8_t *table,
                     float (*scale)(const uint8_t *block), const void *y, size_t n, float *acc) {
  if (n % 32) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / 32; i++) {
    const uint8_t *a = (const uint8_t *)x + i * block_bytes;
    block_q8_0 b;
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    const int sumi = bq_nl32_dot(a + qs_offset, table, b.qs);
    const float d = bq_h2f(b.d) * scale(a);
    sumf += d * (float)sumi;
  }
  acc[0] = sumf;
  return BQ_OK;
}

static float scale(const uint8_t *p) { return bq_h2f(bq_rd16(p + BQ_OFF(iq4_nl, d))); }

/* Per block: sumf += (yd * xd) * (float)(integer sum), one running sum in acc[0]. */
BQ_DOT_PROTO(iq4_nl, q8_0, __ref) {
  return bq_nl32_dot_q8_0(x, sizeof(block_iq4_nl), BQ_OFF(iq4_nl, qs), bq_kvalues_iq4nl, scale, y,
                          n, acc);
}
