/* The SIMD128 Q3_K kernels, plus the Q3_K . Q8_K dot and matvec on relaxed dots: the 3-bit codes
 * plus 4 (0..7) are the 7-bit operand, the Q8_K codes the signed one, read straight from the
 * blocks; each sub-block scaled by bq_rkq_sub16 (relaxed.h), the -4 offset taken out with the
 * sub-block activation sums as in simd128/q3_K.c. Exact integer sums and the SIMD128 float term:
 * the SIMD128 kernels' bits. */
#include "../simd128/q3_K.c"

#include "relaxed.h"

/* Sub-block 8h + 2g + c: the codes of group g from the 16 code bytes and hmask bytes of chunk c of
 * half h, against Q8_K codes 128h + 32g + 16c + 0..15. */
static inline v128_t risum(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  const uint8_t *q8 = yb + offsetof(block_q8_K, qs);
  const v128_t sc = scales(k, b);
  const v128_t s16[2] = {wasm_i16x8_extend_low_i8x16(sc), wasm_i16x8_extend_high_i8x16(sc)};
  v128_t acc = wasm_i32x4_splat(0);
#pragma clang loop unroll(full)
  for (int hc = 0; hc < 4; hc++) {
    const int h = hc >> 1, c = hc & 1;
    const v128_t v = wasm_v128_load(b + XQS + 32 * h + 16 * c);
    const v128_t m = wasm_v128_load(b + XHM + 16 * c);
    for (int g = 0; g < 4; g++)
      acc = bq_rkq_sub16(acc, codes(k, v, m, h, g), q8 + 128 * h + 32 * g + 16 * c, s16[h],
                         8 * h + 2 * g + c);
  }
  /* sum sc_j (S_j - 4 A_j) */
  return kq_hsum(wasm_i32x4_sub(acc, wasm_i32x4_shl(kq_act_scaled(a, sc), 2)));
}

/* simd128/q3_K.c's term on the relaxed integer sum, and the relaxed dot and matvec. */
KQ_D_KERNELS(q3_K, rterm, risum, __relaxed)
