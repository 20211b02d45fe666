/* MXFP4 reference: quantize_row_mxfp4_ref, dequantize_row_mxfp4, ggml_vec_dot_mxfp4_q8_0_generic.
 *
 * The shared exponent is floor(log2(max |x|)) - 2 + 127 as ggml computes it: floorf(log2f(amax)),
 * which is not the exponent field (log2f rounds up to k for the floats just below 2^k). We take
 * floor((float)log2((double)amax)), equal to glibc's floorf(log2f(amax)) for every positive finite
 * float and not dependent on the libm's log2f (emscripten's is musl's). The byte is the float
 * converted as x86-64 converts it (bq_cvt_u8): 0 < amax < 2^-125 gives a negative value, kept mod
 * 256 (ggml's C leaves that undefined); amax = Inf gives 0. NaN inputs never win the max scan. */
#include "../iquants4.h"

/* ggml-common.h kvalues_mxfp4 (= kvalues_fp4) at ggml d99724f2b141fed9e1a9f402213506c081433465
 * (SHA-256 of the 16 bytes: adf76b67...d478f97, checked by the native test). */
const int8_t bq_kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

BQ_QUANTIZE_PROTO(mxfp4, __ref) {
  if (n % 32) return BQ_EINVAL;
  for (size_t i = 0; i < n / 32; i++) {
    const float *xb = x + 32 * i;
    block_mxfp4 b;
    float amax = 0;
    for (int j = 0; j < 32; j++)
      if (amax < fabsf(xb[j])) amax = fabsf(xb[j]);
    b.e = amax > 0 ? bq_cvt_u8(floorf((float)log2((double)amax)) - 2 + 127) : 0;
    const float d = bq_e8m0_half(b.e);
    for (int j = 0; j < 16; j++)
      b.qs[j] = (uint8_t)(bq_fp4_best_code(xb[j], d) | bq_fp4_best_code(xb[j + 16], d) << 4);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_mxfp4 b;
  memcpy(&b, p, sizeof b);
  bq_nl32_dequantize(b.qs, bq_kvalues_mxfp4, bq_e8m0_half(b.e), y);
}

BQ_REF_ROW_KERNELS(mxfp4, 32)

static float scale(const uint8_t *p) { return bq_e8m0_half(p[BQ_OFF(mxfp4, e)]); }

/* Per block: sumf += (yd * 2^(e-128)) * (float)(integer sum), one running sum in acc[0]. */
BQ_DOT_PROTO(mxfp4, q8_0, __ref) {
  return bq_nl32_dot_q8_0(x, sizeof(block_mxfp4), BQ_OFF(mxfp4, qs), bq_kvalues_mxfp4, scale, y, n,
                          acc);
}
