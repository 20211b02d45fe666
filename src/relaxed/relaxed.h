/* Helpers shared by the relaxed-SIMD kernels (the relaxed build: SIMD128 plus two relaxed dots,
 * i32x4.relaxed_dot_i8x16_i7x16_add_s and i16x8.relaxed_dot_i8x16_i7x16_s). They are used only with
 * their second operand in 0..127, where every implementation the proposal allows gives the exact
 * integer result (x86 pmaddubsw cannot saturate: 2 * 128 * 127 < 2^15), and the i16 dot only where
 * its lanes, and the i16 sums taken of them, stay inside i16. Integer block sums are therefore the
 * same integers the SIMD128 kernels compute, and the float steps after them are the SIMD128 ones,
 * so every relaxed kernel returns the SIMD128 kernel's bits. No relaxed float instruction
 * (relaxed_madd) is used: every kernel here must stay bit-exact. js/loader.js probes both dots
 * before it selects this build. */
#ifndef BQ_RELAXED_H
#define BQ_RELAXED_H

#include "../simd128/simd.h"

/* acc + the dot of the 16 signed bytes a with the 16 bytes w (each 0..127), per i32 lane. */
static inline v128_t bq_rdot(v128_t a, v128_t w, v128_t acc) {
  return wasm_i32x4_relaxed_dot_i8x16_i7x16_add(a, w, acc);
}

/* i16 lanes: the sums of adjacent pairs of products a w, of the 16 signed bytes a and the 16 bytes
 * w (each 0..127; |a w + a' w'| <= 2 * 128 * 127 < 2^15). */
static inline v128_t bq_rdot16(v128_t a, v128_t w) {
  return wasm_i16x8_relaxed_dot_i8x16_i7x16(a, w);
}

/* Integer sum of one block's 32 products, as i32x4 partial sums: weight codes 0..31 (lo: elements
 * 0..15, hi: 16..31) against the 32 signed activation codes at q. The two halves are added as i16
 * (each lane at most 4 * 31 * 128 = 15872 in magnitude) and widened once: on x86 a relaxed i16 dot
 * is one pmaddubsw and the widening one pmaddwd, where each i32 dot is both plus an add. (Q4_0 .
 * Q8_0 matvec in Chromium, 4096 columns: 1.26-1.28x the SIMD128 kernel with two i32 dots per
 * block, 1.62-1.69x with this.) */
static inline v128_t bq_rdot_u5x32(v128_t lo, v128_t hi, const uint8_t *q) {
  return wasm_i32x4_extadd_pairwise_i16x8(
      wasm_i16x8_add(bq_rdot16(wasm_v128_load(q), lo), bq_rdot16(wasm_v128_load(q + 16), hi)));
}

/* The same minus off times the sum of the activations (off = 2^sh, sh <= 4): the dot of the codes
 * q - off of Q4_0 (off 8) and Q5_0 (off 16), exactly. In i16 before the widening: the products'
 * lanes are at most 15872 in magnitude and the activation sums' 4 * 128 << 4 = 8192. */
static inline v128_t bq_rdot_off(v128_t lo, v128_t hi, const uint8_t *q, int sh) {
  const v128_t a0 = wasm_v128_load(q), a1 = wasm_v128_load(q + 16), one = wasm_i8x16_splat(1);
  const v128_t s = wasm_i16x8_add(bq_rdot16(a0, one), bq_rdot16(a1, one));
  const v128_t p = wasm_i16x8_add(bq_rdot16(a0, lo), bq_rdot16(a1, hi));
  return wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_sub(p, wasm_i16x8_shl(s, sh)));
}

/* For the super-block formats whose 16-element sub-blocks carry 8-bit scales (Q2_K, Q3_K, Q6_K:
 * simd128/kq236.h's layout): acc plus sub-block j's scaled products, of its codes c (bytes 0..127)
 * and the 16 signed Q8_K codes at q8, as i32x4 partial sums: the i16 relaxed dot's pair sums times
 * the scale by one i32x4.dot_i16x8_s. s16 holds the scales of sub-blocks 8 (j / 8) .. + 7 as i16
 * (|scale| <= 128); one swizzle splats sub-block j's. Each call adds at most 2 * 128 * 2 * 128 *
 * 127 < 2^23 to a lane, sixteen calls per super-block stay below 2^27. */
static inline v128_t bq_rkq_sub16(v128_t acc, v128_t c, const uint8_t *q8, v128_t s16, int j) {
  const int l = 2 * (j & 7);
  const v128_t s = wasm_i8x16_swizzle(s16, wasm_i8x16_make(l, l + 1, l, l + 1, l, l + 1, l, l + 1,
                                                           l, l + 1, l, l + 1, l, l + 1, l, l + 1));
  return wasm_i32x4_add(acc, wasm_i32x4_dot_i16x8(bq_rdot16(wasm_v128_load(q8), c), s));
}

/* One matvec call's activations, prepared once for all rows (relaxed/matvec.c): per block the 32
 * codes, the sum of the codes, and d and s as floats. */
typedef struct {
  const uint8_t *q;
  const int32_t *sum;
  const float *d, *s;
  size_t nb;
} bq_rprep;

/* Prepares nb Q8_0 (bs 34, codes at 2) or Q8_1 (bs 36, codes at 4) blocks, padded with zero blocks
 * to a multiple of 4; 0 if too many. */
int bq_rprepare_q8(const uint8_t *x, size_t nb, size_t bs, size_t qs_off, bq_rprep *out);

/* Terms of 4 blocks of a weight row at a against prepared activation blocks i..i+3. */
typedef v128_t (*bq_rprep_step_fn)(const bq_k *k, const uint8_t *a, const bq_rprep *p, size_t i);

/* y[r] for every row, as bq_matvec_prepared (simd128/simd.h) does it: the same terms as the dot
 * kernel in the same lanes and order, so each row equals that dot exactly; plain dots when the
 * activations are too long to prepare. */
static inline int bq_rmatvec(const uint8_t *w, size_t rows, size_t cols, const uint8_t *x, float *y,
                             size_t xs, size_t ys, size_t qs_off, bq_rprep_step_fn step,
                             int (*dot)(const void *, const void *, size_t, float *)) {
  if (cols % BQ_B32) return BQ_EINVAL;
  const size_t nb = cols / BQ_B32;
  bq_rprep pr;
  if (!bq_rprepare_q8(x, nb, ys, qs_off, &pr))
    bq_matvec_dots(w, rows, nb * xs, cols, x, y, dot);
  else
    BQ_MATVEC_ROWS(w, rows, nb, xs, y, step, &pr);
  return BQ_OK;
}

#endif
