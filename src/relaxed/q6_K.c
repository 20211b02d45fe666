/* The SIMD128 Q6_K kernels, plus the Q6_K . Q8_K dot and matvec on relaxed dots: the 6-bit codes
 * (0..63) are the 7-bit operand, the Q8_K codes the signed one, read as bytes straight from the
 * blocks (no i16 activations). Each sub-block's 16 products go through one i16 relaxed dot (pair
 * sums at most 2 * 128 * 63 = 16128 in magnitude) and one i32x4.dot_i16x8_s with its scale (lanes
 * at most 128 * 32256, sixteen of them per super-block: below 2^27); the -32 offset is taken out
 * with the sub-block activation sums as in simd128/q6_K.c. Exact integer sums and the SIMD128
 * float term: the SIMD128 kernels' bits. (Matvec 1024x4096 in Chromium: 1.44-1.51x the SIMD128
 * kernel; with kq236.h's kq_scale4 on the widened pair sums instead, 1.00-1.12x.) */
#include "../simd128/q6_K.c"

#include "relaxed.h"

/* Sub-block 8h + 2g + c: codes q[g] of pass (h, c) against Q8_K codes 128h + 32g + 16c + 0..15. */
static inline v128_t risum(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  const uint8_t *q8 = yb + offsetof(block_q8_K, qs);
  const v128_t sc = wasm_v128_load(b + XSC);
  const v128_t s16[2] = {wasm_i16x8_extend_low_i8x16(sc), wasm_i16x8_extend_high_i8x16(sc)};
  v128_t acc = wasm_i32x4_splat(0);
#pragma clang loop unroll(full)
  for (int hc = 0; hc < 4; hc++) {
    const int h = hc >> 1, c = hc & 1;
    v128_t q[4];
    codes(k, b, h, c, q);
    for (int g = 0; g < 4; g++) {
      const int j = 8 * h + 2 * g + c;
      acc = bq_rkq_sub16(acc, q[g], q8 + 128 * h + 32 * g + 16 * c, s16[h], j);
    }
  }
  return kq_hsum(wasm_i32x4_sub(acc, wasm_i32x4_shl(kq_act_scaled(a, sc), 5)));
}

/* simd128/q6_K.c's term on the relaxed integer sum, and the relaxed dot and matvec. */
KQ_D_KERNELS(q6_K, rterm, risum, __relaxed)
