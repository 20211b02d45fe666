/* Q5_K reference: quantize_row_q5_K_ref, dequantize_row_q5_K, ggml_vec_dot_q5_K_q8_K_generic.
 *
 * NaN/Inf inputs, as ggml on x86-64: a sub-block holding NaN or Inf fits to NaN (its weights and
 * its min/max scan are NaN or infinite), loses the max_scale and max_min picks, and its codes go
 * through bq_nearest_int and ggml's clamps, so the bytes are those x86-64 gives. */
#include "../kquants.h"

void bq_q5_K_pack_codes(uint8_t *L, block_q5_K *b) {
  memset(b->qh, 0, sizeof b->qh);
  for (int e = 0; e < QK_K; e++) {
    if (L[e] > 15) {
      L[e] -= 16;
      b->qh[e % 32] |= (uint8_t)(1u << (e / 32));
    }
  }
  bq_q45_K_pack_4bit(L, b->qs);
}

BQ_QUANTIZE_PROTO(q5_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q5_K b;
    uint8_t L[QK_K];
    bq_q45_K_fit(x + i * QK_K, 31, -0.5f, 15, L, b.scales, &b.d, &b.dmin);
    bq_q5_K_pack_codes(L, &b);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* A block as integers: codes (each element's nibble plus 16 if its qh bit is set), scale and min
 * per 16 (bq_scale_min_k4's per 32). */
static void decode(const uint8_t *p, bq_kq_block *k) {
  block_q5_K b;
  memcpy(&b, p, sizeof b);
  for (int e = 0; e < QK_K; e++) {
    const int lo = b.qs[32 * (e / 64) + e % 32] >> (e % 64 < 32 ? 0 : 4) & 0xF;
    k->q[e] = (int8_t)(lo + (b.qh[e % 32] >> (e / 32) & 1 ? 16 : 0));
  }
  bq_q45_K_decode_scales(b.scales, b.d, b.dmin, k);
}

/* Decodes one block exactly as dequantize_row_q5_K: (d * scale) * q - (dmin * min). */
static void dequantize_block(const uint8_t *p, float *y) { bq_kq_dequantize_block(p, decode, y); }

BQ_REF_ROW_KERNELS(q5_K, QK_K)

/* As Q4_K's dot: acc[0] = ggml's sumf (the mins, block by block), acc[1..8] = its eight sums. */
BQ_DOT_PROTO(q5_K, q8_K, __ref) { return bq_kq_dot_q8_K(x, sizeof(block_q5_K), decode, y, n, acc); }
