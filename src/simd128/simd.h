/* Helpers shared by the SIMD128 kernels. Conversions avoid integer->float converts of widened
 * bytes: clang 14 turns an i8 -> i16 -> i32 -> f32 chain into per-lane scalar code. Codes are
 * instead placed in i32 lanes directly (a swizzle to the top or the low byte, with zeros around)
 * and converted as i32, with the scale pre-multiplied by the matching power of two; or, for the Q5
 * formats, placed in the mantissa of 2^23 (the bits 0x4B0000xx are the float 2^23 + xx), from
 * which 2^23 plus any offset is subtracted exactly. */
#ifndef BQ_SIMD_H
#define BQ_SIMD_H

#include <wasm_simd128.h>

#include "../internal.h"

#define BQ_MAGIC 8388608.0f /* 2^23 */

/* The block helpers below work on blocks of 32 values (Q4_0 .. Q8_1); each kernel file that uses
 * them asserts that its formats have that block size (types.inc). Block bytes and field offsets
 * come from the callers, who take them from the block structs. */
#define BQ_B32 32
#define BQ_B32_MAX_BYTES sizeof(block_q8_1) /* the largest of those blocks */

/* Swizzle indices moving bytes a..a+3 to the top byte of the four i32 lanes, zeros below (index
 * 0x80 gives 0). Kept as literal constants: V8 then emits a bare pshufb and keeps the mask in a
 * register across the loop (an index vector from a local costs a range fix-up at each use). */
#define BQ_TOP(a)                                                                               \
  wasm_i8x16_const(-128, -128, -128, (a), -128, -128, -128, (a) + 1, -128, -128, -128, (a) + 2, \
                   -128, -128, -128, (a) + 3)

/* The 16 bytes of s, each in the top byte of an i32 lane with zeros below (bytes 0-3 in w[0],
 * ...), converted to float (exact: at most 8 significant bits) and multiplied by d. */
static inline void bq_top_bytes_mul(v128_t s, v128_t d, v128_t w[4]) {
  w[0] = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(s, BQ_TOP(0))), d);
  w[1] = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(s, BQ_TOP(4))), d);
  w[2] = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(s, BQ_TOP(8))), d);
  w[3] = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(s, BQ_TOP(12))), d);
}

/* Swizzle indices moving bytes a..a+3 to the low byte of the four i32 lanes, zeros above. */
#define BQ_LOW(a)                                                                               \
  wasm_i8x16_const((a), -128, -128, -128, (a) + 1, -128, -128, -128, (a) + 2, -128, -128, -128, \
                   (a) + 3, -128, -128, -128)

/* The 16 bytes of s as i32 lanes (bytes 0-3 in w[0], ...), converted to float (exact), times d,
 * plus m: the two rounding steps of q * d + m in the reference (q * d itself is exact).
 * Where both operands of the add are NaN, V8 on x86 returns the first one's, as ggml's q * d + m
 * does on x86 (addss keeps its first operand's NaN); but clang's reassociation pass puts the splat
 * m first (it orders commutative operands by rank). An empty asm statement on m hides it from
 * that pass, so the add is emitted as written, at no cost (the same instructions, m's load
 * placed later). clang 19 cannot take a v128 asm operand (a backend error), so the threads and
 * relaxed builds keep m first: their NaN then has m's bits, which WebAssembly leaves open. */
static inline v128_t bq_low_mul_add(v128_t s, v128_t idx, v128_t d, v128_t m) {
  return wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(s, idx)), d), m);
}
static inline void bq_low_bytes_mul_add(v128_t s, v128_t d, v128_t m, v128_t w[4]) {
#ifdef __EMSCRIPTEN__
  __asm__("" : "+r"(m));
#endif
  w[0] = bq_low_mul_add(s, BQ_LOW(0), d, m);
  w[1] = bq_low_mul_add(s, BQ_LOW(4), d, m);
  w[2] = bq_low_mul_add(s, BQ_LOW(8), d, m);
  w[3] = bq_low_mul_add(s, BQ_LOW(12), d, m);
}

/* Lane k of v in every lane. */
#define BQ_LANE(v, k) wasm_i32x4_shuffle((v), (v), (k), (k), (k), (k))

/* Vector constants (consts.c explains why they live in memory). */
typedef struct {
  uint32_t nib[4], b8[4], b16[4], magic[4], off16[4], magic16[4], lo16[4], hmask[4], hexp[4],
      x112[4], inf32[4], hfill[4], half[4], signbit[4], one[4], magic3[4], abs32[4], rebias[4],
      r0fff[4], one32[4], x24[4], min_normal16[4], max_finite16[4], h_inf[4], h_nan[4], flip8[4],
      hi_nib[4], nib16[4];
} bq_const_table;
extern bq_const_table bq_simd_consts; /* not const: a const table may be re-read at every use */

/* The constants as values; a kernel makes one of these at entry and passes it down by pointer to
 * inline helpers, which the compiler then reads as locals. */
typedef struct {
  v128_t nib, b8, b16, magic, off16, magic16, lo16, hmask, hexp, x112, inf32, hfill, half, signbit,
      one, magic3, abs32, rebias, r0fff, one32, x24, min_normal16, max_finite16, h_inf, h_nan,
      flip8, hi_nib, nib16;
} bq_k;

#define BQ_LD(f) wasm_v128_load(bq_simd_consts.f)
static inline bq_k bq_consts(void) {
  const bq_k k = {BQ_LD(nib),   BQ_LD(b8),           BQ_LD(b16),          BQ_LD(magic),
                  BQ_LD(off16), BQ_LD(magic16),      BQ_LD(lo16),         BQ_LD(hmask),
                  BQ_LD(hexp),  BQ_LD(x112),         BQ_LD(inf32),        BQ_LD(hfill),
                  BQ_LD(half),  BQ_LD(signbit),      BQ_LD(one),          BQ_LD(magic3),
                  BQ_LD(abs32), BQ_LD(rebias),       BQ_LD(r0fff),        BQ_LD(one32),
                  BQ_LD(x24),   BQ_LD(min_normal16), BQ_LD(max_finite16), BQ_LD(h_inf),
                  BQ_LD(h_nan), BQ_LD(flip8),        BQ_LD(hi_nib),       BQ_LD(nib16)};
  return k;
}

/* Input touching, for the dequantizers at memory speed. Such a kernel writes 4 bytes per weight
 * and reads its blocks (0.5-1.1 bytes per weight); with the store stream saturating memory, a
 * load that misses L1 in the middle of it stalls the stream, even when its line is in L2. (Zen 4
 * host, 16M weights, Q6_K's decode unchanged: 0.76x the store-only ceiling with its blocks read
 * from memory, 0.84x from an L2-resident ring of blocks, 0.99x from an L1-resident one.) Touching
 * each 64-byte line of a run of blocks with one byte load, in a burst before decoding the run,
 * brings its lines in together instead of one at a time between the stores. Paired rounds at 16M
 * weights, median ratio to the ceiling before -> after: Q4_K 0.73 -> 0.87, Q6_K 0.73 -> 0.80,
 * MXFP4 0.73 -> 0.88, IQ4_NL 0.72 -> 0.87, IQ4_XS 0.72 -> 0.85, Q4_0 0.72 -> 0.85, Q8_0 0.70 ->
 * 0.78 (runs of 1024 weights); at 64K weights (L2) within 3% either way, Q8_0 6% slower. Runs of
 * 512 weights (2 super-blocks, 16 blocks) against 1024: 0-5% faster at 16M (Q8_0 +6% and -4% in
 * two runs), alike at 64K; 2048 slower, and Q6_K's one super-block at a time too. Touching a run
 * ahead of the one decoded was slower. Q8_0 keeps runs of 1024 weights after all (twelve paired
 * rounds: median 0.75 -> 0.80 at 16M, 3% slower at 64K; simd128/q8_0.c); f16 and bf16 do not
 * touch (no gain at 16M, slower at 64K; simd128/f16.c). The loads are volatile (kept, never
 * merged), their bytes unused; bytes > 0. */
#define BQ_TOUCH_WEIGHTS 512
static inline void bq_touch(const uint8_t *p, size_t bytes) {
  for (size_t o = 0; o < bytes; o += 64) (void)*(const volatile uint8_t *)(p + o);
  (void)*(const volatile uint8_t *)(p + bytes - 1);
}
/* In a loop over nb blocks of bs bytes, at block i (p its address): touches the next run of `run`
 * blocks when i starts one (or the blocks that remain, when fewer). A full run's length is a
 * constant, so its loads are unrolled, with no loop (a loop there, with V8's stack check on its
 * back edge, made the kernels 3-10% slower at 64K weights). */
static inline void bq_touch_run(const uint8_t *p, size_t i, size_t nb, size_t run, size_t bs) {
  if (i % run) return;
  if (nb - i >= run)
    bq_touch(p, run * bs);
  else
    bq_touch(p, (nb - i) * bs);
}

/* The 16 byte codes c of v (0..255) as four vectors of floats 2^23 + c (elements 0-3, 4-7, 8-11,
 * 12-15): interleaving the bytes with zero gives u16 lanes c, interleaving those with the u16
 * 0x4B00 gives u32 lanes 0x4B0000cc, which are the bits of the float 2^23 + c. Four interleaves
 * and two more for the first step: each is one instruction (punpck*), and no integer->float
 * convert is needed (clang 14 scalarises zero-extend + convert). Subtracting 2^23 (+ an offset)
 * afterwards is exact. */
static inline void bq_bytes_to_magic(const bq_k *k, v128_t v, v128_t w[4]) {
  const v128_t z = wasm_i32x4_splat(0);
  const v128_t l = wasm_i8x16_shuffle(v, z, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t h =
      wasm_i8x16_shuffle(v, z, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  w[0] = wasm_i16x8_shuffle(l, k->magic16, 0, 8, 1, 9, 2, 10, 3, 11);
  w[1] = wasm_i16x8_shuffle(l, k->magic16, 4, 12, 5, 13, 6, 14, 7, 15);
  w[2] = wasm_i16x8_shuffle(h, k->magic16, 0, 8, 1, 9, 2, 10, 3, 11);
  w[3] = wasm_i16x8_shuffle(h, k->magic16, 4, 12, 5, 13, 6, 14, 7, 15);
}

/* binary16 bits in the top half of each u32 lane (the low half is ignored) -> f32, exactly as
 * bq_fp16_to_fp32, the vector form of bq_h2f_scaled: an arithmetic shift by 3 and a mask place
 * sign, exponent and mantissa (a float 2^-112 times the half, normal or subnormal), exponent 31 is
 * made 255 by setting bits 28-30, and one multiply by 2^112 finishes it (exact; Inf stays Inf,
 * a NaN keeps its payload and is quietened, as in the reference). */
static inline v128_t bq_h2f_top(const bq_k *k, v128_t v) {
  v128_t r = wasm_v128_and(wasm_i32x4_shr(v, 3), k->hmask);
  const v128_t e31 = wasm_i32x4_eq(wasm_v128_and(r, k->hexp), k->hexp);
  r = wasm_v128_or(r, wasm_u32x4_min(e31, k->hfill)); /* (not and: clang makes that a bitselect) */
  return wasm_f32x4_mul(r, k->x112);
}

/* The same with the binary16 bits in the low half of each u32 lane. */
static inline v128_t bq_h2f_x4(const bq_k *k, v128_t h) {
  return bq_h2f_top(k, wasm_i32x4_shl(h, 16));
}

/* The same for one value, times scale (2^112 for the plain value; 2^(112 - k) gives the value
 * times 2^-k, exact since the result is at least 2^-24-k). An arithmetic shift places sign,
 * exponent and mantissa at once (bits 28-30 get copies of the sign and are cleared): the float is
 * 2^-112 times the half, normal or subnormal. Exponent 31 becomes 255 by setting bits 28-30; the
 * multiply keeps Inf and quietens a NaN keeping its payload, as the reference does. */
static inline float bq_h2f_scaled(uint16_t h, float scale) {
  uint32_t b = (uint32_t)((int32_t)((uint32_t)h << 16) >> 3) & 0x8FFFE000u;
  if ((h & 0x7C00) == 0x7C00) b |= 0x70000000u;
  return bq_float(b) * scale;
}

/* binary16 -> f32, equal to bq_h2f for every h, with no subnormal float operand or result: x86
 * cores take a microcode assist (about 100 cycles) on one, wasm cannot set flush-to-zero, and
 * ggml's fp16 scales are often subnormal (a Q6_K, Q4_K or IQ4_XS d below 2^-14, for weights of
 * magnitude 10^-2), where bq_h2f_scaled's float is 2^-112 times the half. A normal half is rebiased
 * in integer code; a subnormal one is its mantissa, converted exactly, times 2^-24 (a normal float
 * or zero); exponent 31 is Inf or a NaN with its payload, quietened. All three are formed and one
 * is selected: no branch, and no call (a call in a kernel's loop makes V8 keep the loop's vector
 * constants on the stack). */
static inline float bq_h2f_fast(uint16_t h) {
  const uint32_t e = h & 0x7C00u, m = h & 0x3FFu, hb = (uint32_t)(h & 0x7FFF) << 13;
  const uint32_t nrm = hb + (112u << 23);
  const uint32_t special = hb | 0x7F800000u | (m ? 0x400000u : 0);
  const uint32_t sub = bq_bits((float)m * 0x1p-24f);
  const uint32_t mag = e == 0 ? sub : e == 0x7C00u ? special : nrm;
  return bq_float(mag | (uint32_t)(h & 0x8000) << 16);
}

/* The out-of-line bq_h2f_scaled, for the rare scales the loops below do not take inline. */
float bq_h2f_scaled_slow(uint16_t h, float scale);

/* 1 if h has a normal exponent (1..30), for which bq_h2f_pow2_bits needs no multiply. */
static inline int bq_h_normal(uint16_t h) { return (h & 0x7C00u) - 0x400u < 0x7800u; }

/* The bits of the float h times 2^e (-112 < e < 112), exact and equal to bq_h2f_scaled(h,
 * 2^(112 + e)); hs is h sign-extended (a signed 16-bit load). Shifted left by 13 it has sign,
 * exponent and mantissa in place (bits 28-30 get copies of the sign and are cleared); for a
 * normal half, adding 112 + e to the exponent field finishes it, in integer code alone. Zero,
 * subnormals, Inf and NaN take the out-of-line path. */
static inline uint32_t bq_h2f_pow2_bits(int32_t hs, int e) {
  const uint16_t h = (uint16_t)hs;
  const uint32_t b = ((uint32_t)hs << 13) & 0x8FFFE000u;
  if (__builtin_expect(bq_h_normal(h), 1)) return b + ((uint32_t)(112 + e) << 23);
  return bq_bits(bq_h2f_scaled_slow(h, bq_float((uint32_t)(127 + 112 + e) << 23)));
}

/* The 16-bit field at p, sign-extended. */
static inline int32_t bq_rd16s(const uint8_t *p) {
  int16_t v;
  __builtin_memcpy(&v, p, 2);
  return v;
}

/* The bits of d * 2^e and of m (as bq_h2f_pow2_bits) into st[0] and st[1], for a block that
 * starts with the halves d and m: one 32-bit load, and one test that both exponents are normal.
 * In each 16-bit field of ex (bit 15 clear), ex | 0x8000 minus 0x400 keeps bit 15 unless the
 * exponent is 0, and ex + 0x400 sets it only for exponent 31; neither borrows or carries into the
 * other field. Otherwise each half takes bq_h2f_pow2_bits. (Against two separate decodes, with
 * the two-block loop below, on a Zen 3 VM whose speed changes with its neighbours' load: Q4_1
 * the same in its fast phases, 7% faster in its slow ones.) */
static inline void bq_dm_pow2_bits(const uint8_t *p, int e, uint32_t *st) {
  uint32_t x;
  __builtin_memcpy(&x, p, 4);
  const uint32_t ex = x & 0x7C007C00u;
  const uint32_t nonzero = (ex | 0x80008000u) - 0x04000400u, inf_nan = ex + 0x04000400u;
  if (__builtin_expect((nonzero & ~inf_nan & 0x80008000u) == 0x80008000u, 1)) {
    st[0] = ((uint32_t)((int32_t)(x << 16) >> 3) & 0x8FFFE000u) + ((uint32_t)(112 + e) << 23);
    st[1] = ((uint32_t)((int32_t)x >> 3) & 0x8FFFE000u) + (112u << 23);
    return;
  }
  st[0] = bq_h2f_pow2_bits(bq_rd16s(p), e);
  st[1] = bq_h2f_pow2_bits(bq_rd16s(p + 2), 0);
}

/* f32 -> binary16 bits in the low half of each u32 lane, exactly as bq_fp32_to_fp16: integer
 * rounding for normal halves, and for subnormal ones |f| * 2^24 (exact) rounded to nearest even
 * by f32x4.nearest, then turned into integer bits with the magic 2^23 (it is at most 1024). */
static inline v128_t bq_f2h_x4(const bq_k *k, v128_t f) {
  const v128_t ax = wasm_v128_and(f, k->abs32);
  const v128_t sign = wasm_u32x4_shr(wasm_v128_and(f, k->signbit), 16);
  v128_t r = wasm_i32x4_sub(ax, k->rebias);
  r = wasm_i32x4_add(r, wasm_i32x4_add(k->r0fff, wasm_v128_and(wasm_u32x4_shr(r, 13), k->one32)));
  const v128_t normal = wasm_u32x4_shr(r, 13);
  const v128_t sub = wasm_i32x4_sub(
      wasm_f32x4_add(wasm_f32x4_nearest(wasm_f32x4_mul(ax, k->x24)), k->magic), k->magic);
  v128_t h = wasm_v128_bitselect(sub, normal, wasm_i32x4_lt(ax, k->min_normal16));
  h = wasm_v128_bitselect(k->h_inf, h, wasm_i32x4_gt(ax, k->max_finite16));
  h = wasm_v128_bitselect(k->h_nan, h, wasm_i32x4_gt(ax, k->inf32));
  return wasm_v128_or(h, sign);
}

/* The 16-bit fields at p, p + stride, p + 2 stride, p + 3 stride, zero-extended into u32 lanes. */
static inline v128_t bq_load_u16x4(const uint8_t *p, size_t stride) {
  v128_t v = wasm_i32x4_splat(0);
  v = wasm_v128_load16_lane(p, v, 0);
  v = wasm_v128_load16_lane(p + stride, v, 2);
  v = wasm_v128_load16_lane(p + 2 * stride, v, 4);
  v = wasm_v128_load16_lane(p + 3 * stride, v, 6);
  return v;
}

/* The 32-bit fields at p + k * stride, k = 0..3. */
static inline v128_t bq_load_u32x4(const uint8_t *p, size_t stride) {
  v128_t v = wasm_v128_load32_zero(p);
  v = wasm_v128_load32_lane(p + stride, v, 1);
  v = wasm_v128_load32_lane(p + 2 * stride, v, 2);
  v = wasm_v128_load32_lane(p + 3 * stride, v, 3);
  return v;
}

/* The fp16 bits in u32 lanes 0..3 of h, stored at p, p + stride, p + 2 stride, p + 3 stride. */
static inline void bq_store_u16x4(uint8_t *p, size_t stride, v128_t h) {
  wasm_v128_store16_lane(p, h, 0);
  wasm_v128_store16_lane(p + stride, h, 2);
  wasm_v128_store16_lane(p + 2 * stride, h, 4);
  wasm_v128_store16_lane(p + 3 * stride, h, 6);
}

/* [op-reduction of a, of b, of c, of d] for four vectors: a 4x4 transpose folded into three ops,
 * with 32-bit interleaves only (one instruction each in V8). */
#define BQ_REDUCE4(name, op)                                                                   \
  static inline v128_t name(v128_t a, v128_t b, v128_t c, v128_t d) {                          \
    const v128_t ab =                                                                          \
        op(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));        \
    const v128_t cd =                                                                          \
        op(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));        \
    return op(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7)); \
  }
BQ_REDUCE4(bq_hsum4_i32, wasm_i32x4_add)  /* exact integer sums */
BQ_REDUCE4(bq_hmax4_f32, wasm_f32x4_pmax) /* maxima of NaN-free values (pmax: one maxps) */
BQ_REDUCE4(bq_hmin4_f32, wasm_f32x4_pmin)
BQ_REDUCE4(bq_hmax4_i32, wasm_i32x4_max) /* signed maxima (of |x| bits: see simd128/q8.h) */

/* Sum over lanes of the products of i8x16 pairs (a0, b0) and (a1, b1), as i32x4 partial sums. */
static inline v128_t bq_dot_i8x32(v128_t a0, v128_t a1, v128_t b0, v128_t b1) {
  v128_t p = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a0), wasm_i16x8_extend_low_i8x16(b0));
  p = wasm_i32x4_add(
      p, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a0), wasm_i16x8_extend_high_i8x16(b0)));
  p = wasm_i32x4_add(
      p, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a1), wasm_i16x8_extend_low_i8x16(b1)));
  p = wasm_i32x4_add(
      p, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a1), wasm_i16x8_extend_high_i8x16(b1)));
  return p;
}

/* The high nibble of each byte. A 16-bit shift and a mask: V8 has no 8-bit shift and builds one
 * from several instructions. */
static inline v128_t bq_hi4(const bq_k *k, v128_t q) {
  return wasm_v128_and(wasm_u16x8_shr(q, 4), k->nib);
}

extern uint64_t bq_qh_spread[256]; /* consts.c */

/* Codes 0..31 of elements 0..15 (lo) and 16..31 (hi) of the Q5 block whose qh is at h, qs at s:
 * nibbles OR'd with the 5th bits, each qh byte spread to 8 bytes of 0x10 / 0x00 by a table. */
static inline void bq_codes5(const bq_k *k, const uint8_t *h, const uint8_t *s, v128_t *lo,
                             v128_t *hi) {
  const v128_t b01 =
      wasm_v128_load64_lane(&bq_qh_spread[h[1]], wasm_v128_load64_zero(&bq_qh_spread[h[0]]), 1);
  const v128_t b23 =
      wasm_v128_load64_lane(&bq_qh_spread[h[3]], wasm_v128_load64_zero(&bq_qh_spread[h[2]]), 1);
  const v128_t q = wasm_v128_load(s);
  *lo = wasm_v128_or(wasm_v128_and(q, k->nib), b01);
  *hi = wasm_v128_or(bq_hi4(k, q), b23);
}

/* Sum of a tree of 8 product vectors, in a fixed order. */
static inline v128_t bq_sum8(const v128_t p[8]) {
  return wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(p[0], p[1]), wasm_f32x4_add(p[2], p[3])),
                        wasm_f32x4_add(wasm_f32x4_add(p[4], p[5]), wasm_f32x4_add(p[6], p[7])));
}

/* s + t[0] + t[1] + t[2] + t[3], added one lane at a time in that order (a running float sum, as a
 * reference dot adds its terms), in every lane of s: each term is splat before it is added, so the
 * lanes stay equal and no lane leaves the vector inside a loop (lane 0 is read at the end). */
static inline v128_t bq_add_lanes_in_order(v128_t s, v128_t t) {
  s = wasm_f32x4_add(s, wasm_i32x4_shuffle(t, t, 0, 0, 0, 0));
  s = wasm_f32x4_add(s, wasm_i32x4_shuffle(t, t, 1, 1, 1, 1));
  s = wasm_f32x4_add(s, wasm_i32x4_shuffle(t, t, 2, 2, 2, 2));
  return wasm_f32x4_add(s, wasm_i32x4_shuffle(t, t, 3, 3, 3, 3));
}

/* t with lanes n..3 made -0, the float that adds as an exact identity (x + -0 is x for every x,
 * -0 and NaN included): the terms of a last, zero-padded group of n < 4 blocks. */
static inline v128_t bq_keep_lanes(v128_t t, size_t n) {
  const v128_t keep = wasm_i32x4_lt(wasm_i32x4_const(0, 1, 2, 3), wasm_i32x4_splat((int32_t)n));
  return wasm_v128_bitselect(t, wasm_f32x4_splat(-0.0f), keep);
}

/* acc += step(a, b) over groups of 4 blocks of sizes xs and ys; a last partial group runs on
 * zero-padded copies (zero blocks add zero terms), so every group takes the same path. */
typedef v128_t (*bq_step4_fn)(const bq_k *k, const uint8_t *a, const uint8_t *b);

static inline void bq_dot4(const uint8_t *a, const uint8_t *b, size_t nb, size_t xs, size_t ys,
                           float *acc, bq_step4_fn step) {
  const bq_k k = bq_consts();
  v128_t sum = wasm_v128_load(acc);
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, a += 4 * xs, b += 4 * ys) sum = wasm_f32x4_add(sum, step(&k, a, b));
  if (i < nb) {
    uint8_t ta[4 * BQ_B32_MAX_BYTES], tb[4 * BQ_B32_MAX_BYTES];
    memset(ta, 0, sizeof ta);
    memset(tb, 0, sizeof tb);
    memcpy(ta, a, (nb - i) * xs);
    memcpy(tb, b, (nb - i) * ys);
    sum = wasm_f32x4_add(sum, step(&k, ta, tb));
  }
  wasm_v128_store(acc, sum);
}

/* A block decoder: the 32 weights of the block at p into w, given its scale d (times 2^dexp,
 * see bq_h2f_pow2_bits) and, for Q4_1/Q5_1, its m, both splat (see bq_block_scales). The scales are
 * decoded in integer code by the loops below, block by block. (Decoding the scales of 4 blocks as
 * one vector and spreading its lanes is slower: the decoders are bound by the vector units, while
 * integer code runs on otherwise idle ones. Decoding a run of scales in a pass of its own is slower
 * too: it no longer overlaps the vector work.) */
typedef void (*bq_dq_block_fn)(const bq_k *k, const uint8_t *p, v128_t d, v128_t m, v128_t w[8]);

/* Scale slots: the loops below store a block's scale bits through one pointer and load them
 * splat through the other, which the compiler cannot prove equal, so each splat stays a load
 * from memory (no vector ALU op) instead of a move into a vector register and a broadcast.
 * Both point at scratch of the calling thread (threads.c). */
extern _Thread_local uint32_t *bq_scale_slot, *bq_scale_slot_alias; /* consts.c */

/* How the loops below bring a block's scales into vectors: d alone, moved from an integer
 * register and broadcast (BQ_D_REG); d alone through a slot (BQ_D_SLOT); d and m (at offset 2)
 * through the slots (BQ_DM_SLOT). Which is faster depends on the decoder (measured for each
 * format: the slots win for Q4_0, Q4_1 and Q5_1, lose 5% for Q8_0 and 1% for Q5_0). */
enum { BQ_D_REG, BQ_D_SLOT, BQ_DM_SLOT };

/* d * 2^dexp (at offset 0) and, for BQ_DM_SLOT, m (at offset 2) of the block at p, splat. */
static inline void bq_block_scales(const bq_k *k, const uint8_t *p, int scales, int dexp,
                                   uint32_t *st, const uint32_t *ld, v128_t *d, v128_t *m) {
  *m = k->magic;
  if (scales == BQ_D_REG) {
    *d = wasm_i32x4_splat((int32_t)bq_h2f_pow2_bits(bq_rd16s(p), dexp));
    return;
  }
  if (scales == BQ_DM_SLOT)
    bq_dm_pow2_bits(p, dexp, st);
  else
    st[0] = bq_h2f_pow2_bits(bq_rd16s(p), dexp);
  *d = wasm_v128_load32_splat(ld);
  if (scales == BQ_DM_SLOT) *m = wasm_v128_load32_splat(ld + 1);
}

/* A compiler barrier after each store of a block's output keeps its stores in ascending order
 * (clang emits a block's 8 stores last to first). Paired rounds at 16M weights, two runs, median
 * ratio to the ceiling: Q4_0 0.86 -> 0.88, IQ4_NL 0.84 -> 0.88 and 0.89 -> 0.89, MXFP4 0.84 ->
 * 0.91 and 0.87 -> 0.88, IQ4_XS 0.84 -> 0.87 and 0.89 -> 0.89, Q8_0 0.73 -> 0.79 and 0.75 ->
 * 0.76, Q5_0 0.77 -> 0.82; alike at 64K. Not for Q4_1 and Q5_1 (d and m through the slots): Q5_1
 * ran 40% slower with it at 64K and 16M weights, Q4_1 0.86 -> 0.85. (As kq45.h's stores.) */
#define BQ_STORE_ORDER() __asm__ volatile("" ::: "memory")

/* One block of bq_dequantize_blocks. */
static inline void bq_dequantize_block(const bq_k *k, const uint8_t *p, float *y, int scales,
                                       int dexp, uint32_t *st, const uint32_t *ld,
                                       bq_dq_block_fn block) {
  v128_t d, m, w[8];
  bq_block_scales(k, p, scales, dexp, st, ld, &d, &m);
  block(k, p, d, m, w);
  for (int j = 0; j < 8; j++) {
    wasm_v128_store(y + 4 * j, w[j]);
    if (scales != BQ_DM_SLOT) BQ_STORE_ORDER();
  }
}

/* Dequantize loop over nb blocks of bs bytes, two blocks per iteration: V8 puts a stack check
 * and the loop's bookkeeping, about 9 instructions, on every back edge. (Against one block per
 * iteration, paired rounds on a Zen 3 host: 2-9% faster at 64K weights for the five formats.) */
static inline void bq_dequantize_blocks_run(const uint8_t *p, float *y, size_t nb, size_t bs,
                                            int scales, int dexp, bq_dq_block_fn block,
                                            size_t run) {
  const bq_k k = bq_consts();
  uint32_t *st = bq_scale_slot;
  const uint32_t *ld = bq_scale_slot_alias;
  size_t i = 0;
  for (; i + 2 <= nb; i += 2, p += 2 * bs, y += 2 * BQ_B32) {
    bq_touch_run(p, i, nb, run, bs); /* bq_touch */
    bq_dequantize_block(&k, p, y, scales, dexp, st, ld, block);
    bq_dequantize_block(&k, p + bs, y + BQ_B32, scales, dexp, st, ld, block);
  }
  if (i < nb) bq_dequantize_block(&k, p, y, scales, dexp, st, ld, block);
}

/* The same with the input touched in runs of BQ_TOUCH_WEIGHTS weights. */
static inline void bq_dequantize_blocks(const uint8_t *p, float *y, size_t nb, size_t bs,
                                        int scales, int dexp, bq_dq_block_fn block) {
  bq_dequantize_blocks_run(p, y, nb, bs, scales, dexp, block, BQ_TOUCH_WEIGHTS / BQ_B32);
}

/* Fused dequantize-and-multiply: acc += the 32 products of each block, summed per lane in
 * bq_sum8's order. */
static inline void bq_dot_f32_blocks(const uint8_t *a, const float *v, size_t nb, size_t bs,
                                     int scales, int dexp, float *acc, bq_dq_block_fn block) {
  const bq_k k = bq_consts();
  uint32_t *st = bq_scale_slot;
  const uint32_t *ld = bq_scale_slot_alias;
  v128_t sum = wasm_v128_load(acc);
  for (size_t i = 0; i < nb; i++, a += bs, v += BQ_B32) {
    v128_t d, m, w[8];
    bq_block_scales(&k, a, scales, dexp, st, ld, &d, &m);
    block(&k, a, d, m, w);
    for (int j = 0; j < 8; j++) w[j] = wasm_f32x4_mul(w[j], wasm_v128_load(v + 4 * j));
    sum = wasm_f32x4_add(sum, bq_sum8(w));
  }
  wasm_v128_store(acc, sum);
}

/* Prepared activations of one matvec call (simd128/matvec.c). */
typedef struct {
  const int16_t *q;
  const int32_t *sum; /* per block, the sum of its codes (BQ_PREP_NIBBLES only) */
  const float *d, *s;
  size_t nb;
} bq_prep;

/* How the codes of a prepared block are ordered: as in the block (BQ_PREP_PLAIN), or in the
 * order bq_dot_nib_i16 takes 4-bit weights from u16 lanes (BQ_PREP_NIBBLES): elements 0, 2, ..,
 * 14, then 1, 3, .., 15, then 16, 18, .., 30, then 17, 19, .., 31. */
enum { BQ_PREP_PLAIN, BQ_PREP_NIBBLES };

/* The most Q8_0/Q8_1 blocks bq_prepare_q8 takes (131072 columns); longer rows use plain dots. */
#define BQ_PREP_MAX_BLOCKS 4096
/* Where bq_prepare_q8 writes: the calling thread's scratch (matvec.c, threads.c). */
extern _Thread_local int16_t *bq_prep_q;
extern _Thread_local float *bq_prep_d, *bq_prep_s;
extern _Thread_local int32_t *bq_prep_sum;

/* Prepares nb Q8_0 (bs 34, codes at 2) or Q8_1 (bs 36, codes at 4) blocks in the given order into
 * the calling thread's scratch; 0 if too many. */
int bq_prepare_q8(const uint8_t *x, size_t nb, size_t bs, size_t qs_off, int order, bq_prep *out);

/* Terms of 4 blocks of a weight row at a against prepared activation blocks i..i+3. */
typedef v128_t (*bq_prep_step_fn)(const bq_k *k, const uint8_t *a, const bq_prep *p, size_t i);

/* y[r] for every row by the dot kernel: for activations too long to prepare. */
static inline void bq_matvec_dots(const uint8_t *w, size_t rows, size_t row, size_t cols,
                                  const uint8_t *x, float *y,
                                  int (*dot)(const void *, const void *, size_t, float *)) {
  for (size_t r = 0; r < rows; r++) {
    float acc[BQ_ACC_LANES] = {0};
    dot(w + r * row, x, cols, acc);
    y[r] = bq_acc_sum__simd128(acc);
  }
}

/* y[r] for every row of nb blocks of xs bytes at w: step's terms over groups of 4 blocks against
 * the prepared activations pr (a zero-padded copy for the last partial group), in the dot
 * kernel's lanes and order, then (a0 + a1) + (a2 + a3) as bq_acc_sum__simd128, with shuffles and
 * a lane store. A macro, so that the simd128 and relaxed drivers share it over their own
 * preparations (bq_prep, bq_rprep) and steps. */
#define BQ_MATVEC_ROWS(w, rows, nb, xs, y, step, pr)                                               \
  do {                                                                                             \
    const bq_k k_ = bq_consts();                                                                   \
    const uint8_t *w_ = (w);                                                                       \
    for (size_t r_ = 0; r_ < (rows); r_++, w_ += (nb) * (xs)) {                                    \
      v128_t sum_ = wasm_f32x4_splat(0.0f);                                                        \
      size_t i_ = 0;                                                                               \
      for (; i_ + 4 <= (nb); i_ += 4)                                                              \
        sum_ = wasm_f32x4_add(sum_, step(&k_, w_ + i_ * (xs), (pr), i_));                          \
      if (i_ < (nb)) {                                                                             \
        uint8_t ta_[4 * BQ_B32_MAX_BYTES];                                                         \
        memset(ta_, 0, sizeof ta_);                                                                \
        memcpy(ta_, w_ + i_ * (xs), ((nb)-i_) * (xs));                                             \
        sum_ = wasm_f32x4_add(sum_, step(&k_, ta_, (pr), i_));                                     \
      }                                                                                            \
      const v128_t t_ = wasm_f32x4_add(sum_, wasm_i32x4_shuffle(sum_, sum_, 1, 0, 3, 2));          \
      wasm_v128_store32_lane((y) + r_, wasm_f32x4_add(t_, wasm_i32x4_shuffle(t_, t_, 2, 3, 0, 1)), \
                             0);                                                                   \
    }                                                                                              \
  } while (0)

/* y[r] for every row: the same terms as the dot kernel, summed in the same lanes and order
 * (including the zero-padded last group), so each equals the dot of that row exactly. Falls back
 * to the dot kernel when the activations are too long to prepare. */
static inline int bq_matvec_prepared(const uint8_t *w, size_t rows, size_t cols, const uint8_t *x,
                                     float *y, size_t xs, size_t ys, size_t qs_off, int order,
                                     bq_prep_step_fn step,
                                     int (*dot)(const void *, const void *, size_t, float *)) {
  if (cols % BQ_B32) return BQ_EINVAL;
  const size_t nb = cols / BQ_B32;
  bq_prep pr;
  if (!bq_prepare_q8(x, nb, ys, qs_off, order, &pr))
    bq_matvec_dots(w, rows, nb * xs, cols, x, y, dot);
  else
    BQ_MATVEC_ROWS(w, rows, nb, xs, y, step, &pr);
  return BQ_OK;
}

/* Integer sum of one block's 32 products: weight codes as i8 (lo: elements 0..15, hi: 16..31)
 * against prepared i16 activations. */
static inline v128_t bq_dot_i8_i16(v128_t lo, v128_t hi, const int16_t *q) {
  v128_t p = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(lo), wasm_v128_load(q));
  p = wasm_i32x4_add(p,
                     wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(lo), wasm_v128_load(q + 8)));
  p = wasm_i32x4_add(p,
                     wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(hi), wasm_v128_load(q + 16)));
  p = wasm_i32x4_add(
      p, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(hi), wasm_v128_load(q + 24)));
  return p;
}

/* Integer sum of one block's 32 products: the 4-bit codes q (unsigned, 0..15) of a Q4 block's 16
 * bytes against activations prepared in BQ_PREP_NIBBLES order. Each u16 lane of the bytes holds
 * four codes; a mask and shifts within u16 lanes take them out already widened (6 operations, where
 * splitting nibbles into bytes and widening those to i16 takes 9 in V8). */
static inline v128_t bq_dot_nib_i16(const bq_k *k, v128_t q, const int16_t *a) {
  v128_t p = wasm_i32x4_dot_i16x8(wasm_v128_and(q, k->nib16), wasm_v128_load(a));
  p = wasm_i32x4_add(p, wasm_i32x4_dot_i16x8(wasm_v128_and(wasm_u16x8_shr(q, 8), k->nib16),
                                             wasm_v128_load(a + 8)));
  p = wasm_i32x4_add(p, wasm_i32x4_dot_i16x8(wasm_v128_and(wasm_u16x8_shr(q, 4), k->nib16),
                                             wasm_v128_load(a + 16)));
  p = wasm_i32x4_add(p, wasm_i32x4_dot_i16x8(wasm_u16x8_shr(q, 12), wasm_v128_load(a + 24)));
  return p;
}

/* The Q4_1/Q5_1 . Q8_1 terms (dx * dy) * sumi + mx * sy of four weight blocks at a (stride xs,
 * d and m at offsets 0 and 2), given the activations' d and s and the block sums. */
static inline v128_t bq_terms_dm(const bq_k *k, const uint8_t *a, size_t xs, v128_t dy, v128_t sy,
                                 v128_t si) {
  const v128_t xa = bq_load_u32x4(a, xs);
  const v128_t dx = bq_h2f_x4(k, wasm_v128_and(xa, k->lo16)),
               mx = bq_h2f_x4(k, wasm_u32x4_shr(xa, 16));
  return wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_mul(dx, dy), wasm_f32x4_convert_i32x4(si)),
                        wasm_f32x4_mul(mx, sy));
}

/* d and s of four Q8_1 blocks at b. */
static inline void bq_q8_1_ds(const bq_k *k, const uint8_t *b, v128_t *d, v128_t *s) {
  static_assert(offsetof(block_q8_1, d) == 0 && offsetof(block_q8_1, s) == 2, "d, s in a u32");
  const v128_t yb = bq_load_u32x4(b, sizeof(block_q8_1));
  *d = bq_h2f_x4(k, wasm_v128_and(yb, k->lo16));
  *s = bq_h2f_x4(k, wasm_u32x4_shr(yb, 16));
}

/* roundf(v) (half away from zero) as an integer, for finite |v| < 2^22: trunc(v + copysign(c, v))
 * with c = 0.49999997f (0x1.fffffep-2, the float below 0.5), which equals roundf(v) for every float
 * below 2^23 in magnitude (checked over all of them: a fraction below 0.5 plus c rounds to below
 * the next integer, and an exact half plus c rounds up to it); the integer-valued result plus 1.5 *
 * 2^23 has the integer in its low mantissa bits. Six operations, where comparing the fraction with
 * 0.5 took ten. (No i32x4.trunc_sat, which V8 expands a lot.) */
static inline v128_t bq_roundf_small(const bq_k *k, v128_t v) {
  const v128_t c =
      wasm_v128_or(wasm_v128_and(v, k->signbit), wasm_f32x4_const_splat(0x1.fffffep-2f));
  const v128_t r = wasm_f32x4_trunc(wasm_f32x4_add(v, c));
  return wasm_i32x4_sub(wasm_f32x4_add(r, k->magic3), k->magic3);
}

/* acc += x . y for float element types: groups of 32 elements (loaded as floats by LOAD(p, k),
 * the k-th group of 4 at element p) sum into one vector, as in the block kernels; a last partial
 * group runs on zero-padded copies.  */
#define BQ_DOT_FLOAT(ESIZE, LOAD)                                                          \
  const bq_k k = bq_consts();                                                              \
  const uint8_t *a = x;                                                                    \
  const float *v = y;                                                                      \
  v128_t sum = wasm_v128_load(acc);                                                        \
  size_t i = 0;                                                                            \
  for (; i + BQ_B32 <= n; i += BQ_B32) {                                                   \
    v128_t p[8];                                                                           \
    for (int j = 0; j < 8; j++)                                                            \
      p[j] = wasm_f32x4_mul(LOAD(a + (i + 4 * j) * ESIZE), wasm_v128_load(v + i + 4 * j)); \
    sum = wasm_f32x4_add(sum, bq_sum8(p));                                                 \
  }                                                                                        \
  if (i < n) {                                                                             \
    uint8_t ta[BQ_B32 * ESIZE];                                                            \
    float tv[BQ_B32];                                                                      \
    memset(ta, 0, sizeof ta);                                                              \
    memset(tv, 0, sizeof tv);                                                              \
    memcpy(ta, a + i * ESIZE, (n - i) * ESIZE);                                            \
    memcpy(tv, v + i, (n - i) * 4);                                                        \
    v128_t p[8];                                                                           \
    for (int j = 0; j < 8; j++)                                                            \
      p[j] = wasm_f32x4_mul(LOAD(ta + 4 * j * ESIZE), wasm_v128_load(tv + 4 * j));         \
    sum = wasm_f32x4_add(sum, bq_sum8(p));                                                 \
  }                                                                                        \
  wasm_v128_store(acc, sum);                                                               \
  return BQ_OK;

#endif
