/* Q4_K reference: quantize_row_q4_K_ref, dequantize_row_q4_K, ggml_vec_dot_q4_K_q8_K_generic.
 *
 * NaN/Inf inputs, as ggml on x86-64: a sub-block holding NaN or Inf fits to NaN (its weights and
 * its min/max scan are NaN or infinite), loses the max_scale and max_min picks, and its codes go
 * through bq_nearest_int and ggml's clamps, so the bytes are those x86-64 gives. */
#include "../kquants.h"

BQ_QUANTIZE_PROTO(q4_K, __ref) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    block_q4_K b;
    uint8_t L[QK_K];
    bq_q45_K_fit(x + i * QK_K, 15, -1.0f, 20, L, b.scales, &b.d, &b.dmin);
    bq_q45_K_pack_4bit(L, b.qs);
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

/* A block as integers: codes element by element, scale and min per 16 (bq_scale_min_k4's per 32).
 */
static void decode(const uint8_t *p, bq_kq_block *k) {
  block_q4_K b;
  memcpy(&b, p, sizeof b);
  for (int e = 0; e < QK_K; e++)
    k->q[e] = (int8_t)(b.qs[32 * (e / 64) + e % 32] >> (e % 64 < 32 ? 0 : 4) & 0xF);
  bq_q45_K_decode_scales(b.scales, b.d, b.dmin, k);
}

/* Decodes one block exactly as dequantize_row_q4_K: (d * scale) * q - (dmin * min). */
static void dequantize_block(const uint8_t *p, float *y) { bq_kq_dequantize_block(p, decode, y); }

BQ_REF_ROW_KERNELS(q4_K, QK_K)

/* ggml sums element e's integer product into lane e % 8 and adds (d*yd) * lane to eight float sums
 * per block; the mins go straight into sumf, sumf -= (dmin*yd) * sum(bsums * min), block by block;
 * at the end sumf += each of the eight sums in turn. State: acc[0] = sumf, acc[1..8] = the sums,
 * so the left-to-right lane sum is ggml's final reduction. */
BQ_DOT_PROTO(q4_K, q8_K, __ref) { return bq_kq_dot_q8_K(x, sizeof(block_q4_K), decode, y, n, acc); }
