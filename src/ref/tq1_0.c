/* TQ1_0 reference: quantize_row_tq1_0_ref, dequantize_row_tq1_0, ggml_vec_dot_tq1_0_q8_K_generic.
 *
 * d and the trits as TQ2_0 (src/ref/tq2_0.c). A byte holds five trits t0..t4 (four in qh, then a
 * zero fifth) as v = t0*81 + t1*27 + t2*9 + t3*3 + t4, stored as ceil(v * 256 / 243), so trit k is
 * the top of (byte * 3^k mod 256) * 3 (bq_tq1_trit). ggml builds v in a uint8_t, so trits out of
 * 0..2 (NaN or out-of-range inputs) wrap exactly as they do there. */
#include "../iquants4.h"

/* Element e lives in byte byte_of(e), trit trit_of(e): qs[m] holds m, m+32, ..., m+128 (m < 32);
 * qs[32+m] holds 160+m, 176+m, ..., 224+m (m < 16); qh[j] holds 240+j, 244+j, 248+j, 252+j. */
static inline int byte_of(int e) {
  return e < 160 ? e % 32 : e < 240 ? 32 + (e - 160) % 16 : 48 + (e - 240) % 4;
}
static inline int trit_of(int e) {
  return e < 160 ? e / 32 : e < 240 ? (e - 160) / 16 : (e - 240) / 4;
}

BQ_QUANTIZE_PROTO(tq1_0, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    const float *xb = x + i * QK_K;
    block_tq1_0 b;
    float amax = 0;
    for (int e = 0; e < QK_K; e++) amax = amax > fabsf(xb[e]) ? amax : fabsf(xb[e]);
    const float id = amax != 0 ? 1.0f / amax : 0.0f;
    b.d = bq_fp32_to_fp16(amax);
    uint8_t v[52] = {0}; /* base-3 numbers of qs[0..47] and qh[0..3] */
    /* Elements in increasing trit order within each byte: v = v * 3 + trit, mod 256. */
    for (int k = 0; k < 5; k++)
      for (int e = 0; e < QK_K; e++)
        if (trit_of(e) == k) v[byte_of(e)] = (uint8_t)(v[byte_of(e)] * 3 + bq_tq_trit(xb[e] * id));
    for (int j = 48; j < 52; j++) v[j] = (uint8_t)(v[j] * 3); /* qh: the first trit to the top */
    uint8_t q[52];
    static_assert(sizeof b.qs + sizeof b.qh == sizeof q, "qs then qh: 52 bytes of trits");
    for (int j = 0; j < 52; j++)
      q[j] = (uint8_t)((v[j] * 256 + 242) / 243); /* ceil(v * 256 / 243) */
    memcpy(b.qs, q, sizeof b.qs);
    memcpy(b.qh, q + sizeof b.qs, sizeof b.qh);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* Element e's trit 0..2. */
static inline int trit(const block_tq1_0 *b, int e) {
  const int j = byte_of(e);
  return bq_tq1_trit(j < 48 ? b->qs[j] : b->qh[j - 48], trit_of(e));
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_tq1_0 b;
  memcpy(&b, p, sizeof b);
  const float d = bq_h2f(b.d);
  for (int e = 0; e < QK_K; e++) y[e] = (float)(trit(&b, e) - 1) * d;
}

BQ_REF_ROW_KERNELS(tq1_0, QK_K)

/* Per super-block: sumf += (float)sumi * (xd * yd), one running sum in acc[0]. */
BQ_DOT_PROTO(tq1_0, q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / QK_K; i++) {
    block_tq1_0 a;
    block_q8_K b;
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(&b, (const uint8_t *)y + i * sizeof b, sizeof b);
    int sumi = 0;
    for (int e = 0; e < QK_K; e++) sumi += (trit(&a, e) - 1) * b.qs[e];
    sumf += (float)sumi * (bq_h2f(a.d) * b.d);
  }
  acc[0] = sumf;
  return BQ_OK;
}
