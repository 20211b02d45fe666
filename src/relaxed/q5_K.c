/* The SIMD128 Q5_K kernels, plus the Q5_K . Q8_K dot and matvec on relaxed dots: the 5-bit codes
 * (0..31) are the 7-bit operand, the Q8_K codes the signed one, read as bytes straight from the
 * blocks (no prepared i16 activations), as relaxed/q4_K.c does. The sub-block integer lanes are
 * exact, and the float terms are simd128/kq45.h's, so results are the SIMD128 kernels' bits. */
#include "../simd128/q5_K.c"

#include "relaxed.h"

/* Sub-block 2s: the low code halves of qs[32s..32s+31] (fifth bits from qh) against codes
 * 64s..64s+31; 2s+1: the high halves against codes 64s+32..64s+63. */
BQ_KQ_INLINE v128_t rterms(const bq_k *k, const bq_kq *c, const uint8_t *p, bq_kq_act act, float yd,
                           const uint8_t *bsums) {
  v128_t P[8];
  const uint8_t *a = (const uint8_t *)act.q;
  v128_t hs0 = wasm_v128_load(p + XQH), hs1 = wasm_v128_load(p + XQH + 16);
  /* Not unrolled, as in simd128/q5_K.c. */
  _Pragma("clang loop unroll(disable)") for (int s = 0; s < 4; s++) {
    v128_t l0, h0, l1, h1;
    codes(k, c, wasm_v128_load(p + XQS + 32 * s), hs0, &l0, &h0);
    codes(k, c, wasm_v128_load(p + XQS + 32 * s + 16), hs1, &l1, &h1);
    P[2 * s] = bq_rdot_u5x32(l0, l1, a + 64 * s);
    P[2 * s + 1] = bq_rdot_u5x32(h0, h1, a + 64 * s + 32);
    hs0 = wasm_u16x8_shr(hs0, 2);
    hs1 = wasm_u16x8_shr(hs1, 2);
  }
  return bq_kq_terms(P, bq_kq_scales(k, c, p + XSC), bsums, bq_h2f_fast(bq_rd16(p + XD)) * yd,
                     bq_h2f_fast(bq_rd16(p + XDM)) * yd);
}

BQ_DOT_PROTO(q5_K, q8_K, __relaxed) {
  if (n % QK_K) return BQ_EINVAL;
  bq_kq_dot(x, y, n / QK_K, XS, acc, rterms, bq_q5_K_dot_q8_K__ref);
  return BQ_OK;
}

/* Each row summed as bq_kq_dot sums it, so y[r] is that row's relaxed dot. */
BQ_MATVEC_PROTO(q5_K, q8_K, __relaxed) {
  if (cols % QK_K) return BQ_EINVAL;
  const size_t nb = cols / QK_K;
  const uint8_t *wr = w;
  for (size_t r = 0; r < rows; r++) {
    float acc[BQ_ACC_LANES] = {0};
    bq_kq_dot(wr, x, nb, XS, acc, rterms, bq_q5_K_dot_q8_K__ref);
    y[r] = bq_acc_sum__simd128(acc);
    wr += nb * XS;
  }
  return BQ_OK;
}
