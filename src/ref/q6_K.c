/* Q6_K reference: quantize_row_q6_K_ref, dequantize_row_q6_K, ggml_vec_dot_q6_K_q8_K_generic.
 *
 * NaN/Inf inputs, as ggml on x86-64: the amax scans skip NaN (comparisons with it are false), a
 * sub-block whose fit turns NaN loses the max_scale pick, and every code goes through
 * bq_nearest_int and ggml's clamps (the int8 scales only from above, then mod 256), so the bytes
 * are those x86-64 gives. */
#include "../kquants.h"

int bq_q6_K_scales(const float *scales, block_q6_K *b) {
  float max_scale = 0, max_abs_scale = 0;
  for (int j = 0; j < 16; j++) {
    const float a = fabsf(scales[j]);
    if (a > max_abs_scale) {
      max_abs_scale = a;
      max_scale = scales[j];
    }
  }
  if (max_abs_scale < 1e-15f) { /* ggml's GROUP_MAX_EPS: the whole block is zeros */
    memset(b, 0, sizeof *b);
    return 0;
  }
  const float iscale = bq_div(-128.f, max_scale);
  b->d = bq_fp32_to_fp16(bq_div(1, iscale));
  for (int j = 0; j < 16; j++) {
    const int l = bq_nearest_int(bq_mul(iscale, scales[j]));
    b->scales[j] = (int8_t)(uint8_t)(l < 127 ? l : 127);
  }
  return 1;
}

void bq_q6_K_quantize_block(const float *x, const float *qw, block_q6_K *b) {
  int8_t L[QK_K];
  float scales[16];
  for (int j = 0; j < 16; j++)
    scales[j] = bq_make_qx_quants(16, 32, x + 16 * j, qw ? qw + 16 * j : NULL, L + 16 * j);
  if (!bq_q6_K_scales(scales, b)) return;
  /* Re-quantize against the stored scales; a sub-block whose scale is 0 keeps its fit's codes. */
  const float d = bq_h2f(b->d);
  for (int j = 0; j < 16; j++) {
    const float dl = bq_mul(d, (float)b->scales[j]);
    if (dl == 0) continue;
    for (int i = 0; i < 16; i++) {
      const int l = bq_nearest_int(bq_div(x[16 * j + i], dl));
      L[16 * j + i] = (int8_t)((l < -32 ? -32 : l > 31 ? 31 : l) + 32);
    }
  }
  bq_q6_K_pack_codes(L, b);
}

void bq_q6_K_pack_codes(const int8_t *L, block_q6_K *b) {
  for (int h = 0; h < 2; h++)
    for (int l = 0; l < 32; l++) {
      const int8_t *p = L + 128 * h + l;
      b->ql[64 * h + l] = (uint8_t)((p[0] & 0xF) | (p[64] & 0xF) << 4);
      b->ql[64 * h + 32 + l] = (uint8_t)((p[32] & 0xF) | (p[96] & 0xF) << 4);
      b->qh[32 * h + l] =
          (uint8_t)(p[0] >> 4 | (p[32] >> 4) << 2 | (p[64] >> 4) << 4 | (p[96] >> 4) << 6);
    }
}

BQ_QUANTIZE_PROTO(q6_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q6_K b;
    bq_q6_K_quantize_block(x + i * QK_K, NULL, &b);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* A block as integers: the signed codes, -32..31 (4 low bits from ql, 2 high bits from qh, minus
 * 32), and the 16 int8 scales. */
static void decode(const uint8_t *p, bq_kq_block *k) {
  block_q6_K b;
  memcpy(&b, p, sizeof b);
  for (int e = 0; e < QK_K; e++) {
    const int h = e / 128, c = (e % 128) / 32, l = e % 32;
    const int lo = b.ql[64 * h + 32 * (c & 1) + l] >> (c < 2 ? 0 : 4) & 0xF;
    const int hi = b.qh[32 * h + l] >> (2 * c) & 3;
    k->q[e] = (int8_t)((lo | hi << 4) - 32);
  }
  for (int j = 0; j < 16; j++) k->scale[j] = b.scales[j];
  k->d = b.d;
  k->has_min = 0;
}

/* Decodes one block exactly as dequantize_row_q6_K: (d * scale) * q. */
static void dequantize_block(const uint8_t *p, float *y) { bq_kq_dequantize_block(p, decode, y); }

BQ_REF_ROW_KERNELS(q6_K, QK_K)

/* As Q3_K's dot: acc[0] = ggml's sumf (0 until its final reduction), acc[1..8] = its eight sums. */
BQ_DOT_PROTO(q6_K, q8_K, __ref) { return bq_kq_dot_q8_K(x, sizeof(block_q6_K), decode, y, n, acc); }
