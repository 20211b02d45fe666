/* TQ1_0 SIMD128 quantizer, bit-exact with ref/tq1_0.c (tq.h: blocks with a NaN take the
 * reference). The trits come from the shared vector code; each output byte's base-3 number
 * v = t0*81 + t1*27 + t2*9 + t3*3 + t4 (at most 242: no wrap without NaN) is formed in i16 lanes,
 * then stored as ceil(v * 256 / 243) = floor((v * 256 + 242) / 243), computed in f32: the
 * numerator is an exact integer below 2^16 and no quotient lies within 2^-24 (relative) of an
 * integer it is not, so the truncated float quotient is the integer one. */
#include "tq.h"

/* v of 8 output bytes whose trit k is t[k * stride + j], j = 0..7 (the first trit most
 * significant). */
static inline v128_t base3(const uint8_t *t, int stride) {
  v128_t v = wasm_i16x8_splat(0);
  for (int k = 0; k < 5; k++)
    v = wasm_i16x8_add(wasm_i16x8_mul(v, wasm_i16x8_splat(3)), wasm_u16x8_load8x8(t + k * stride));
  return v;
}

/* ceil(v * 256 / 243) of four i32 lanes. */
static inline v128_t ceil243(v128_t v) {
  const v128_t f =
      wasm_f32x4_convert_i32x4(wasm_i32x4_add(wasm_i32x4_shl(v, 8), wasm_i32x4_splat(242)));
  return wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_div(f, wasm_f32x4_splat(243.0f)));
}

/* The 8 bytes of v (u16 lanes) stored as ceil243 of each. */
static inline void put8(uint8_t *out, v128_t v) {
  const v128_t lo = ceil243(wasm_u32x4_extend_low_u16x8(v)),
               hi = ceil243(wasm_u32x4_extend_high_u16x8(v));
  const v128_t b = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(lo, hi), wasm_i16x8_splat(0));
  wasm_v128_store64_lane(out, b, 0);
}

BQ_QUANTIZE_PROTO(tq1_0, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  for (size_t i = 0; i < n / QK_K; i++) {
    const float *xb = x + i * QK_K;
    uint8_t *out = (uint8_t *)y + i * sizeof(block_tq1_0);
    if (bq_tq_has_nan(xb)) {
      bq_tq1_0_quantize__ref(xb, out, QK_K);
      continue;
    }
    const v128_t amax = bq_tq_amax(xb);
    uint8_t t[QK_K] __attribute__((aligned(16)));
    bq_tq_trits(xb, bq_tq_inverse(amax), t);
    uint8_t *qs = out + offsetof(block_tq1_0, qs), *qh = out + offsetof(block_tq1_0, qh);
    for (int m = 0; m < 32; m += 8) put8(qs + m, base3(t + m, 32));            /* 0..159 */
    for (int m = 0; m < 16; m += 8) put8(qs + 32 + m, base3(t + 160 + m, 16)); /* 160..239 */
    /* qh[j]: elements 240 + j, 244 + j, 248 + j, 252 + j (the four i32 quarters of t[240..255]),
     * then a zero fifth trit. */
    const v128_t r = wasm_v128_load(t + 240);
    const v128_t a = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(r)),
                 b = wasm_u32x4_extend_high_u16x8(wasm_u16x8_extend_low_u8x16(r)),
                 c = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_high_u8x16(r)),
                 d = wasm_u32x4_extend_high_u16x8(wasm_u16x8_extend_high_u8x16(r));
    const v128_t three = wasm_i32x4_splat(3);
    v128_t v = wasm_i32x4_add(wasm_i32x4_mul(a, three), b);
    v = wasm_i32x4_add(wasm_i32x4_mul(v, three), c);
    v = wasm_i32x4_mul(wasm_i32x4_add(wasm_i32x4_mul(v, three), d), three);
    const v128_t q = ceil243(v);
    const v128_t q16 = wasm_i16x8_narrow_i32x4(q, q);
    wasm_v128_store32_lane(qh, wasm_u8x16_narrow_i16x8(q16, q16), 0);
    bq_tq_store_d(out + offsetof(block_tq1_0, d), amax);
  }
  return BQ_OK;
}
