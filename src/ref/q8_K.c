/* Q8_K reference: quantize_row_q8_K_ref, dequantize_row_q8_K. Q8_K is the activation format the
 * K-quant dots pair with; ggml has no Q8_K . Q8_K dot, so neither do we.
 *
 * NaN/Inf inputs, as ggml on x86-64: the amax scan skips NaN; a NaN element gets the code
 * bq_nearest_int gives its product (0 for the default NaN). An Inf element makes iscale -0 or
 * +0, so the block's finite elements get code 0, Inf gets (Inf*0 = NaN) code 0, and d = 1/iscale
 * is -Inf or +Inf. */
#include "../kquants.h"

static void quantize_block(const float *x, block_q8_K *b) {
  float max = 0, amax = 0;
  for (int j = 0; j < QK_K; j++) {
    const float ax = fabsf(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  if (amax == 0) {
    /* ggml writes only d and qs here and leaves bsums as they were; we write zeros. */
    memset(b, 0, sizeof *b);
    return;
  }
  /* -127, not -128: ggml changed it for its IQ2_XXS AVX kernel. */
  const float iscale = bq_div(-127.f, max);
  for (int j = 0; j < QK_K; j++) {
    const int v = bq_nearest_int(bq_mul(iscale, x[j]));
    b->qs[j] = (int8_t)(uint8_t)(v < 127 ? v : 127);
  }
  for (int j = 0; j < QK_K / 16; j++) {
    int sum = 0;
    for (int i = 0; i < 16; i++) sum += b->qs[16 * j + i];
    b->bsums[j] = (int16_t)sum;
  }
  b->d = bq_div(1, iscale);
}

BQ_QUANTIZE_PROTO(q8_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q8_K b;
    quantize_block(x + i * QK_K, &b);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* Decodes one block exactly as dequantize_row_q8_K: d * q. */
static void dequantize_block(const uint8_t *p, float *y) {
  block_q8_K b;
  memcpy(&b, p, sizeof b);
  for (int e = 0; e < QK_K; e++) y[e] = b.d * (float)b.qs[e];
}

BQ_REF_ROW_KERNELS(q8_K, QK_K)
