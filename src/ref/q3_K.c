/* Q3_K reference: quantize_row_q3_K_ref, dequantize_row_q3_K, ggml_vec_dot_q3_K_q8_K_generic.
 *
 * NaN/Inf inputs, as ggml on x86-64: the amax scans skip NaN (comparisons with it are false), a
 * sub-block whose fit turns NaN loses the max_scale pick, and every code goes through
 * bq_nearest_int and ggml's clamps, so the bytes are those x86-64 gives; d may be Inf or NaN. */
#include "../kquants.h"

void bq_q3_K_pack_scale(int j, int l, uint8_t *scales) {
  if (j < 8)
    scales[j] = (uint8_t)(l & 0xF);
  else
    scales[j - 8] |= (uint8_t)((l & 0xF) << 4);
  scales[8 + j % 4] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
}

void bq_q3_K_finish(const float *x, int8_t *L, block_q3_K *b) {
  /* Re-quantize against the stored scale; a sub-block whose scale is 0 keeps its fit's codes. */
  const float d = bq_h2f(b->d);
  for (int j = 0; j < 16; j++) {
    const float dl = bq_mul(d, (float)(bq_q3_K_scale(b->scales, j) - 32));
    if (dl == 0) continue;
    for (int i = 0; i < 16; i++) {
      const int l = bq_nearest_int(bq_div(x[16 * j + i], dl));
      L[16 * j + i] = (int8_t)((l < -4 ? -4 : l > 3 ? 3 : l) + 4);
    }
  }
  bq_q3_K_pack_codes(L, b);
}

void bq_q3_K_pack_codes(int8_t *L, block_q3_K *b) {
  memset(b->hmask, 0, sizeof b->hmask);
  for (int e = 0; e < QK_K; e++) {
    if (L[e] > 3) {
      b->hmask[e % 32] |= (uint8_t)(1u << (e / 32));
      L[e] -= 4;
    }
  }
  bq_kq_pack_2bit((const uint8_t *)L, b->qs); /* codes 0..3 now */
}

void bq_q3_K_scales(const float *scales, block_q3_K *b) {
  float max_scale = 0, amax = 0;
  for (int j = 0; j < 16; j++) {
    const float a = fabsf(scales[j]);
    if (a > amax) {
      amax = a;
      max_scale = scales[j];
    }
  }
  memset(b->scales, 0, sizeof b->scales);
  if (max_scale != 0) {
    const float iscale = bq_div(-32.f, max_scale);
    for (int j = 0; j < 16; j++) {
      /* ggml stores nearest_int in an int8_t first, then clamps: keep that order. */
      int l = (int8_t)(uint8_t)bq_nearest_int(bq_mul(iscale, scales[j]));
      bq_q3_K_pack_scale(j, (l < -32 ? -32 : l > 31 ? 31 : l) + 32, b->scales);
    }
    b->d = bq_fp32_to_fp16(bq_div(1, iscale));
  } else {
    b->d = bq_fp32_to_fp16(0.f);
  }
}

static void quantize_block(const float *x, block_q3_K *b) {
  int8_t L[QK_K];
  float scales[16];
  for (int j = 0; j < 16; j++) scales[j] = bq_make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
  bq_q3_K_scales(scales, b);
  bq_q3_K_finish(x, L, b);
}

BQ_QUANTIZE_PROTO(q3_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q3_K b;
    quantize_block(x + i * QK_K, &b);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* A block as integers: the signed codes, -4..3 (the 2-bit code, minus 4 unless its hmask bit is
 * set), and the 16 scales, the 6-bit values minus 32. */
static void decode(const uint8_t *p, bq_kq_block *k) {
  block_q3_K b;
  memcpy(&b, p, sizeof b);
  for (int e = 0; e < QK_K; e++) {
    const int q = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    k->q[e] = (int8_t)(q - (b.hmask[e % 32] >> (e / 32) & 1 ? 0 : 4));
  }
  for (int j = 0; j < 16; j++) k->scale[j] = bq_q3_K_scale(b.scales, j) - 32;
  k->d = b.d;
  k->has_min = 0;
}

/* Decodes one block exactly as dequantize_row_q3_K: (d * (scale - 32)) * code. */
static void dequantize_block(const uint8_t *p, float *y) { bq_kq_dequantize_block(p, decode, y); }

BQ_REF_ROW_KERNELS(q3_K, QK_K)

/* ggml sums element e's integer product into lane e % 8, adds (d*yd) * lane to eight float sums
 * per block, and adds the eight sums to sumf (0) at the end. State: acc[0] = sumf, acc[1..8] = the
 * eight sums, so the left-to-right lane sum is ggml's final reduction. */
BQ_DOT_PROTO(q3_K, q8_K, __ref) { return bq_kq_dot_q8_K(x, sizeof(block_q3_K), decode, y, n, acc); }
