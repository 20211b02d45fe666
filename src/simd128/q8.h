/* The Q8_0/Q8_1 activation quantizer and decoder shared by simd128/q8_0.c and q8_1.c. */
#ifndef BQ_SIMD_Q8_H
#define BQ_SIMD_Q8_H

#include "simd.h"

void bq_q8_0_quantize_block__ref(const float *x, void *out);
void bq_q8_1_quantize_block__ref(const float *x, void *out);

/* Per-lane partial maxima of the bits of |x| over one block, as signed integers: for finite
 * non-negative floats the integer order of the bits is their order (+-0 both give 0), so the
 * largest is max |x| exactly; a NaN or Inf anywhere gives a lane of at least 0x7f800000. */
static inline v128_t bq_q8_amax(const bq_k *k, const float *x) {
  v128_t m = wasm_v128_and(wasm_v128_load(x), k->abs32);
  for (int j = 1; j < 8; j++)
    m = wasm_i32x4_max(m, wasm_v128_and(wasm_v128_load(x + 4 * j), k->abs32));
  return m;
}

/* The 32 codes roundf(x * id) of one block, stored at q; returns their per-lane sums. */
static inline v128_t bq_q8_codes(const bq_k *k, const float *x, v128_t id, uint8_t *q) {
  v128_t c[8];
  for (int j = 0; j < 8; j++)
    c[j] = bq_roundf_small(k, wasm_f32x4_mul(wasm_v128_load(x + 4 * j), id));
  const v128_t a = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(c[0], c[1]),
                                           wasm_i16x8_narrow_i32x4(c[2], c[3]));
  const v128_t b = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(c[4], c[5]),
                                           wasm_i16x8_narrow_i32x4(c[6], c[7]));
  wasm_v128_store(q, a);
  wasm_v128_store(q + 16, b);
  return wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_add(c[0], c[1]), wasm_i32x4_add(c[2], c[3])),
                        wasm_i32x4_add(wasm_i32x4_add(c[4], c[5]), wasm_i32x4_add(c[6], c[7])));
}

/* Four blocks of Q8 activations (stride bs bytes, codes at offset qs_off); returns d of each block
 * and leaves the code sums in *sums. A group with a NaN or Inf goes to the reference, whose
 * sequential max scan treats NaN the way ggml's does; returns 0 then. */
static inline int bq_q8_quant4(const bq_k *k, const float *x, uint8_t *o, size_t bs, size_t qs_off,
                               v128_t *d_out, v128_t *sums) {
  /* One integer max per 4 values (a float pmax would not see a NaN, and a sum of |x| beside it
   * caught them at one more operation per 4 values). */
  const v128_t bits = bq_hmax4_i32(bq_q8_amax(k, x), bq_q8_amax(k, x + 32), bq_q8_amax(k, x + 64),
                                   bq_q8_amax(k, x + 96));
  const v128_t d = wasm_f32x4_div(bits, wasm_f32x4_splat(127.0f));
  const v128_t zero = wasm_f32x4_splat(0.0f);
  const v128_t id = wasm_v128_andnot(wasm_f32x4_div(k->one, d), wasm_f32x4_eq(d, zero));
  /* Finite inputs and a finite 1/d (not so for a subnormal d) keep every x * id within +-127.x. */
  const v128_t ok =
      wasm_v128_and(wasm_i32x4_lt(bits, k->inf32), wasm_f32x4_lt(wasm_f32x4_abs(id), k->inf32));
  if (!wasm_i32x4_all_true(ok)) return 0;
  const v128_t h = bq_f2h_x4(k, d);
  bq_store_u16x4(o, bs, h);
  const v128_t s0 = bq_q8_codes(k, x, BQ_LANE(id, 0), o + qs_off);
  const v128_t s1 = bq_q8_codes(k, x + 32, BQ_LANE(id, 1), o + bs + qs_off);
  const v128_t s2 = bq_q8_codes(k, x + 64, BQ_LANE(id, 2), o + 2 * bs + qs_off);
  const v128_t s3 = bq_q8_codes(k, x + 96, BQ_LANE(id, 3), o + 3 * bs + qs_off);
  *sums = bq_hsum4_i32(s0, s1, s2, s3);
  *d_out = d;
  return 1;
}

/* Q8 scales are decoded as d * 2^-24 (bq_h2f_pow2_bits with this exponent; exact, see there). */
#define BQ_Q8_DEXP (-24)

/* The 32 weights q * d of a Q8_0/Q8_1 block at p whose codes start at offset off, given
 * d24 = d * 2^-24. A swizzle moves code j into the top byte of lane j with zeros below (index
 * 0x80 gives 0): the lane is the i32 q * 2^24, converted exactly, and (q * 2^24) * (d * 2^-24)
 * rounds like q * d since both factors are exact and so is their real product. One shuffle, one
 * convert and one multiply per 4 weights, no widening chain. */
static inline void bq_q8_weights(const uint8_t *p, int off, v128_t d24, v128_t w[8]) {
  bq_top_bytes_mul(wasm_v128_load(p + off), d24, w);
  bq_top_bytes_mul(wasm_v128_load(p + off + 16), d24, w + 4);
}

#endif
