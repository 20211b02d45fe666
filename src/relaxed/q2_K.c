/* The SIMD128 Q2_K kernels, plus the Q2_K . Q8_K dot and matvec on relaxed dots: the 2-bit codes
 * (0..3) are the 7-bit operand, the Q8_K codes the signed one, read straight from the blocks;
 * each sub-block scaled by bq_rkq_sub16 (relaxed.h) with its 4-bit scale, the mins' term from the
 * Q8_K bsums as in simd128/q2_K.c. Exact integer sums and the SIMD128 float term: the SIMD128
 * kernels' bits. */
#include "../simd128/q2_K.c"

#include "relaxed.h"

/* Sub-block 8h + 2g + c: bits 2g..2g+1 of the 16 code bytes of chunk c of half h, against Q8_K
 * codes 128h + 32g + 16c + 0..15. */
static inline v128_t rterm(const kq_k *k, const uint8_t *b, const uint8_t *yb, const kq_act *a) {
  (void)a;
  const uint8_t *q8 = yb + offsetof(block_q8_K, qs);
  const v128_t s = wasm_v128_load(b + XSC), sc = wasm_v128_and(s, k->nib);
  const v128_t s16[2] = {wasm_u16x8_extend_low_u8x16(sc), wasm_u16x8_extend_high_u8x16(sc)};
  v128_t acc = wasm_i32x4_splat(0);
#pragma clang loop unroll(full)
  for (int hc = 0; hc < 4; hc++) {
    const int h = hc >> 1, c = hc & 1;
    const v128_t v = wasm_v128_load(b + XQS + 32 * h + 16 * c);
    for (int g = 0; g < 4; g++)
      acc = bq_rkq_sub16(acc, wasm_v128_and(g ? wasm_u16x8_shr(v, 2 * g) : v, k->m03),
                         q8 + 128 * h + 32 * g + 16 * c, s16[h], 8 * h + 2 * g + c);
  }
  const v128_t is = kq_hsum(acc);
  const v128_t mn = wasm_v128_and(wasm_u16x8_shr(s, 4), k->nib);
  const v128_t summs = kq_hsum(wasm_i32x4_add(
      wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(mn), wasm_v128_load(yb + YBS)),
      wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(mn), wasm_v128_load(yb + YBS + 16))));
  float yd;
  memcpy(&yd, yb + offsetof(block_q8_K, d), 4);
  const float dall = yd * bq_h2f_fast(bq_rd16(b + XD)), dmin = yd * bq_h2f_fast(bq_rd16(b + XDM));
  return wasm_f32x4_sub(wasm_f32x4_mul(wasm_f32x4_splat(dall), wasm_f32x4_convert_i32x4(is)),
                        wasm_f32x4_mul(wasm_f32x4_splat(dmin), wasm_f32x4_convert_i32x4(summs)));
}

BQ_DOT_PROTO(q2_K, q8_K, __relaxed) {
  if (n % QK_K) return BQ_EINVAL;
  kq_dot(x, y, n / QK_K, XS, acc, rterm);
  return BQ_OK;
}

BQ_MATVEC_PROTO(q2_K, q8_K, __relaxed) {
  return kq_matvec(w, rows, cols, x, y, XS, rterm, bq_q2_K_dot_q8_K__relaxed);
}
