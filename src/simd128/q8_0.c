/* Q8_0 SIMD128 kernels; same results as ref/q8_0.c (dot: same per-block terms, 4-lane sum). */
#include "q8.h"

BQ_QUANTIZE_PROTO(q8_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  const bq_k k = bq_consts();
  uint8_t *o = y;
  const size_t nb = n / QK;
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, x += 4 * QK, o += 4 * 34) {
    v128_t d, sums;
    if (!bq_q8_quant4(&k, x, o, 34, 2, &d, &sums))
      for (int k = 0; k < 4; k++) bq_q8_0_quantize_block__ref(x + k * QK, o + k * 34);
  }
  for (; i < nb; i++, x += QK, o += 34) bq_q8_0_quantize_block__ref(x, o);
  return BQ_OK;
}

static inline void dq_block(const bq_k *k, const uint8_t *p, v128_t d24, v128_t m, v128_t w[8]) {
  (void)k, (void)m;
  bq_q8_weights(p, 2, d24, w);
}

BQ_DEQUANTIZE_PROTO(q8_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dequantize_blocks(x, y, n / QK, 34, BQ_D_REG, BQ_Q8_DEXP, dq_block);
  return BQ_OK;
}

static inline v128_t isum(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  (void)k;
  return bq_dot_i8x32(wasm_v128_load(a + 2), wasm_v128_load(a + 18), wasm_v128_load(b + 2),
                      wasm_v128_load(b + 18));
}

/* Terms sumi * (dx * dy) of four blocks. */
static inline v128_t step4(const bq_k *k, const uint8_t *a, const uint8_t *b) {
  const v128_t si = bq_hsum4_i32(isum(k, a, b), isum(k, a + 34, b + 34), isum(k, a + 68, b + 68),
                                 isum(k, a + 102, b + 102));
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, 34)), dy = bq_h2f_x4(k, bq_load_u16x4(b, 34));
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), wasm_f32x4_mul(dx, dy));
}

BQ_DOT_PROTO(q8_0, q8_0, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot4(x, y, n / QK, 34, 34, acc, step4);
  return BQ_OK;
}

BQ_DOT_PROTO(q8_0, f32, __simd128) {
  if (n % QK) return BQ_EINVAL;
  bq_dot_f32_blocks(x, y, n / QK, 34, BQ_D_REG, BQ_Q8_DEXP, acc, dq_block);
  return BQ_OK;
}

/* matvec: four blocks of a row against prepared activations (same terms as step4). */
static inline v128_t pstep4(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i) {
  (void)k;
  v128_t s[4];
  for (int b = 0; b < 4; b++)
    s[b] = bq_dot_i8_i16(wasm_v128_load(a + 34 * b + 2), wasm_v128_load(a + 34 * b + 18),
                         p->q + (i + b) * QK);
  const v128_t si = bq_hsum4_i32(s[0], s[1], s[2], s[3]);
  const v128_t dx = bq_h2f_x4(k, bq_load_u16x4(a, 34)), dy = wasm_v128_load(p->d + i);
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(si), wasm_f32x4_mul(dx, dy));
}

BQ_MATVEC_PROTO(q8_0, q8_0, __simd128) {
  return bq_matvec_prepared(w, rows, cols, x, y, 34, 34, 2, BQ_PREP_PLAIN, pstep4,
                            bq_q8_0_dot_q8_0__simd128);
}
