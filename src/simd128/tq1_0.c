/* TQ1_0 SIMD128 kernels: quantize and dequantize bit-exact with ref/tq1_0.c (tq.h: blocks with a
 * NaN take the reference quantizer); the dot with Q8_K from the same exact integer sum and the
 * same float term per super-block, added to acc[0] in order (so it equals the reference's, and a
 * matvec row, from the same terms, the dot of that row).
 *
 * Quantizer: the trits come from the shared vector code; each output byte's base-3 number
 * v = t0*81 + t1*27 + t2*9 + t3*3 + t4 (at most 242: no wrap without NaN) is formed in i16 lanes,
 * then stored as ceil(v * 256 / 243) = floor((v * 256 + 242) / 243), computed in f32: the
 * numerator is an exact integer below 2^16 and no quotient lies within 2^-24 (relative) of an
 * integer it is not, so the truncated float quotient is the integer one.
 *
 * Decoders: trit k of byte q is (r * 3) >> 8 with r = q * 3^k mod 256, that is 0, 1 or 2 as r is
 * below 86, below 171 or neither. The bytes are kept as r - 128 (q ^ 0x80): then r' = r - 128 also
 * triples mod 256 from one trit to the next (3(r - 128) = 3r - 128 - 256), by wrapping byte
 * arithmetic, and the thresholds are two signed byte compares, r' > -43 and r' > 42, whose masks
 * m1, m2
 * (-1 where true) give trit - 1 = ~(m1 + m2). Against Q8_K codes a, (trit - 1) * a is a where m2,
 * -a where not m1: the two masked byte vectors are summed apart in pairs (never -a in a byte: -128
 * has no negation there), 16 bytes a step, straight from the Q8_K block. */
#include "tq.h"

enum {
  XS = sizeof(block_tq1_0),
  XQS = offsetof(block_tq1_0, qs),
  XQH = offsetof(block_tq1_0, qh),
  XD = offsetof(block_tq1_0, d),
  YQS = offsetof(block_q8_K, qs)
};

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

/* r' (r - 128, above) times 3 mod 256 in every byte: the next trit's bytes. 2r is a 16-bit
 * doubling with the bit carried into each odd byte masked off: written as byte adds, r + r + r
 * becomes an i8x16 multiply by 3, which SIMD128 lacks and clang scalarises. */
static inline v128_t next_trit(const tq_k *k, v128_t r) {
  return wasm_i8x16_add(wasm_v128_and(wasm_i16x8_shl(r, 1), k->fe), r);
}

/* The bytes r' of the qh trits in element order: byte 4k + j holds trit k of qh[j] (elements
 * 240 + 4k + j), from the four bytes splat and tripled. */
static inline v128_t qh_bytes(const tq_k *k, const uint8_t *b) {
  const v128_t r0 = wasm_v128_xor(wasm_v128_load32_splat(b + XQH), k->flip);
  const v128_t r1 = next_trit(k, r0), r2 = next_trit(k, r1), r3 = next_trit(k, r2);
  return wasm_i32x4_shuffle(wasm_i32x4_shuffle(r0, r1, 0, 5, 2, 7),
                            wasm_i32x4_shuffle(r2, r3, 0, 5, 2, 7), 0, 1, 6, 7);
}

/* The 16 values (trit - 1) * d of the bytes r' (d as bq_tq_d24). */
static inline void values(const tq_k *k, v128_t r, v128_t d, v128_t w[4]) {
  const v128_t m = wasm_i8x16_add(wasm_i8x16_gt(r, k->t1), wasm_i8x16_gt(r, k->t2));
  bq_top_bytes_mul(wasm_v128_not(m), d, w);
}

/* The 256 values of the block at b, 16 at a time, to out(elements offset, values): qs[0..15] and
 * qs[16..31] hold elements 32k + (0..15) and 32k + 16 + (0..15) as trit k = 0..4, qs[32..47] hold
 * 160 + 16k + (0..15), qh the last 16 (qh_bytes). */
#define TQ1_BLOCK_VALUES(k, b, d, OUT)                                           \
  do {                                                                           \
    for (int c_ = 0; c_ < 3; c_++) {                                             \
      v128_t r_ = wasm_v128_xor(wasm_v128_load((b) + XQS + 16 * c_), (k)->flip); \
      for (int t_ = 0; t_ < 5; t_++, r_ = next_trit((k), r_)) {                  \
        v128_t w_[4];                                                            \
        values((k), r_, (d), w_);                                                \
        OUT(c_ < 2 ? 32 * t_ + 16 * c_ : 160 + 16 * t_, w_);                     \
      }                                                                          \
    }                                                                            \
    v128_t w_[4];                                                                \
    values((k), qh_bytes((k), (b)), (d), w_);                                    \
    OUT(240, w_);                                                                \
  } while (0)

BQ_DEQUANTIZE_PROTO(tq1_0, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const tq_k k = tq_consts();
  const uint8_t *b = x;
  const size_t nb = n / QK_K, run = BQ_TOUCH_WEIGHTS / QK_K;
  for (size_t i = 0; i < nb; i++, b += XS, y += QK_K) {
    bq_touch_run(b, i, nb, run, XS); /* simd.h */
    const v128_t d = bq_tq_d24(bq_rd16(b + XD));
#define STORE(e, w) \
  for (int s_ = 0; s_ < 4; s_++) wasm_v128_store(y + (e) + 4 * s_, (w)[s_])
    TQ1_BLOCK_VALUES(&k, b, d, STORE);
#undef STORE
  }
  return BQ_OK;
}

BQ_DOT_PROTO(tq1_0, f32, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const tq_k k = tq_consts();
  const uint8_t *b = x;
  const float *v = y;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < n / QK_K; i++, b += XS, v += QK_K) {
    const v128_t d = bq_tq_d24(bq_rd16(b + XD));
    v128_t s[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0),
                   wasm_f32x4_splat(0)};
#define MUL_ADD(e, w) bq_tq_mul_add((w), v + (e), s)
    TQ1_BLOCK_VALUES(&k, b, d, MUL_ADD);
#undef MUL_ADD
    sum = wasm_f32x4_add(sum, kq_sum4(s[0], s[1], s[2], s[3]));
  }
  wasm_v128_store(acc, sum);
  return BQ_OK;
}

/* acc (i16 lanes) += the products (trit - 1) * a of the 16 bytes r' and Q8_K codes a, in pairs
 * (each pair sum at most 256 in magnitude; 16 steps a super-block stay below 2^13). */
static inline v128_t dot16(const tq_k *k, v128_t r, v128_t a, v128_t acc) {
  const v128_t pos = wasm_v128_and(wasm_i8x16_gt(r, k->t2), a),
               neg = wasm_v128_andnot(a, wasm_i8x16_gt(r, k->t1));
  acc = wasm_i16x8_add(acc, wasm_i16x8_extadd_pairwise_i8x16(pos));
  return wasm_i16x8_sub(acc, wasm_i16x8_extadd_pairwise_i8x16(neg));
}

/* The reference's term (float)sumi * (xd * yd), in every lane, of the block at b against the
 * Q8_K block at yb. */
static inline v128_t term(const tq_k *k, const uint8_t *b, const uint8_t *yb) {
  const uint8_t *q = yb + YQS;
  v128_t acc = wasm_i16x8_splat(0);
#pragma clang loop unroll(full)
  for (int c = 0; c < 3; c++) {
    v128_t r = wasm_v128_xor(wasm_v128_load(b + XQS + 16 * c), k->flip);
    for (int t = 0; t < 5; t++, r = next_trit(k, r))
      acc = dot16(k, r, wasm_v128_load(q + (c < 2 ? 32 * t + 16 * c : 160 + 16 * t)), acc);
  }
  acc = dot16(k, qh_bytes(k, b), wasm_v128_load(q + 240), acc);
  const v128_t is = kq_hsum(wasm_i32x4_extadd_pairwise_i16x8(acc)); /* kq236.h */
  float yd;
  memcpy(&yd, yb + offsetof(block_q8_K, d), 4);
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(is),
                        wasm_f32x4_splat(bq_h2f_fast(bq_rd16(b + XD)) * yd));
}

BQ_DOT_PROTO(tq1_0, q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const tq_k k = tq_consts();
  const uint8_t *b = x, *yb = y;
  v128_t s = wasm_v128_load32_splat(acc);
  for (size_t i = 0; i < n / QK_K; i++, b += XS, yb += sizeof(block_q8_K))
    s = wasm_f32x4_add(s, term(&k, b, yb));
  acc[0] = wasm_f32x4_extract_lane(s, 0);
  return BQ_OK;
}

/* Rows from the same terms as the dot, from a zero state, read as the dot's state (kq_row_sum). */
BQ_MATVEC_PROTO(tq1_0, q8_K, __simd128) {
  if (cols % QK_K) return BQ_EINVAL;
  const tq_k k = tq_consts();
  const size_t nb = cols / QK_K;
  const uint8_t *b = w;
  for (size_t r = 0; r < rows; r++) {
    const uint8_t *yb = x;
    v128_t s = wasm_f32x4_splat(0);
    for (size_t i = 0; i < nb; i++, b += XS, yb += sizeof(block_q8_K))
      s = wasm_f32x4_add(s, term(&k, b, yb));
    y[r] = kq_row_sum(s);
  }
  return BQ_OK;
}
