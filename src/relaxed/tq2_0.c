/* The SIMD128 TQ2_0 kernels, plus the TQ2_0 . Q8_K dot and matvec on relaxed dots: the 2-bit codes
 * (0..2; a hostile 3 reads as 3 - 1 as in the reference) are the 7-bit operand, the Q8_K codes the
 * signed one, read straight from the blocks. The i16 dots' pair sums (at most 2 * 3 * 128 = 768 in
 * magnitude) of a super-block's 16 groups add up in i16 (at most 12288) and are widened once; the
 * -1 offset is taken out with the prepared sub-block sums as in simd128/tq2_0.c. Exact integer sums
 * and the SIMD128 float term: its bits. */
#include "../simd128/tq2_0.c"

#include "relaxed.h"

/* Group g of the 16 code bytes of chunk hc (bits 2g..2g+1) against Q8_K codes 128h + 32g + 16c. */
static inline v128_t rterm(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  const uint8_t *q8 = yb + offsetof(block_q8_K, qs);
  v128_t p = wasm_i16x8_splat(0);
#pragma clang loop unroll(full)
  for (int hc = 0; hc < 4; hc++) {
    const v128_t v = wasm_v128_load(b + XQS + 16 * hc);
    const uint8_t *ah = q8 + 128 * (hc >> 1) + 16 * (hc & 1);
    for (int g = 0; g < 4; g++)
      p = wasm_i16x8_add(p, bq_rdot16(wasm_v128_load(ah + 32 * g),
                                      wasm_v128_and(g ? wasm_u16x8_shr(v, 2 * g) : v, k->m03)));
  }
  const v128_t asum = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_load(a->sum), k->one16),
                                     wasm_i32x4_dot_i16x8(wasm_v128_load(a->sum + 8), k->one16));
  const v128_t is = kq_hsum(wasm_i32x4_sub(wasm_i32x4_extadd_pairwise_i16x8(p), asum));
  float yd;
  memcpy(&yd, yb + offsetof(block_q8_K, d), 4);
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(is),
                        wasm_f32x4_splat(yd * bq_h2f_fast(bq_rd16(b + XD))));
}

BQ_DOT_PROTO(tq2_0, q8_K, __relaxed) {
  if (n % QK_K) return BQ_EINVAL;
  kq_dot(x, y, n / QK_K, XS, acc, rterm);
  return BQ_OK;
}

BQ_MATVEC_PROTO(tq2_0, q8_K, __relaxed) {
  return kq_matvec(w, rows, cols, x, y, XS, rterm, bq_tq2_0_dot_q8_K__relaxed);
}
