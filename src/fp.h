/* Float arithmetic with x86-64's NaN results, for the quantizers.
 *
 * Quantized bytes are integers, so they must equal what ggml writes on x86-64 for every input,
 * NaN payloads included: a NaN reaches the bytes through nearest_int (the payload's low bits
 * become a code), an fp16 or bf16 conversion (its sign and payload bits are kept) or a comparison.
 * x86-64's SSE arithmetic (what ggml's reference runs as) gives, for an operation with
 *   - one NaN operand: that NaN, quieted (bit 22 set), sign and payload kept;
 *   - two NaN operands: the first source, quieted (gcc emits the C operand order for the
 *     non-commutative ones; for + and * either, and then only ggml's tests tell);
 *   - no NaN operand but an invalid operation (Inf - Inf, 0 * Inf, 0 / 0, Inf / Inf, sqrt of a
 *     negative): the default NaN 0xFFC00000, which is negative.
 * WebAssembly leaves the bits of a NaN result to the engine (V8's tiers and compilers differ, and
 * a compiler may commute the operands of + and *), so on any path whose NaN can reach the bytes the
 * quantizers compute with these functions: each does the operation, and only when the result is
 * NaN builds x86-64's NaN from the operands' bits (moves, loads and stores keep NaN bits in wasm;
 * only arithmetic does not). The check costs one compare on the common path. */
#ifndef BQ_FP_H
#define BQ_FP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define BQ_QUIET_BIT 0x00400000u
#define BQ_DEFAULT_NAN 0xFFC00000u

static inline uint32_t bq_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static inline float bq_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The NaN x86-64 returns for an operation on a and b whose result is NaN. */
static inline float bq_nan_of(float a, float b) {
  if (a != a) return bq_float(bq_bits(a) | BQ_QUIET_BIT);
  if (b != b) return bq_float(bq_bits(b) | BQ_QUIET_BIT);
  return bq_float(BQ_DEFAULT_NAN);
}

static inline float bq_add(float a, float b) {
  const float r = a + b;
  return r == r ? r : bq_nan_of(a, b);
}

static inline float bq_sub(float a, float b) {
  const float r = a - b;
  return r == r ? r : bq_nan_of(a, b);
}

static inline float bq_mul(float a, float b) {
  const float r = a * b;
  return r == r ? r : bq_nan_of(a, b);
}

static inline float bq_div(float a, float b) {
  const float r = a / b;
  return r == r ? r : bq_nan_of(a, b);
}

/* sqrtss: a NaN operand quieted; a negative one (not -0) gives the default NaN. */
static inline float bq_sqrt(float a) {
  const float r = sqrtf(a);
  return r == r ? r : bq_nan_of(a, a);
}

/* c ? a : b, keeping the bits of a NaN b. Compilers treat NaN bits as unspecified in selects too:
 * clang turns `if (v > 0) v = 0;` into f32.min(v, 0), whose NaN result is canonical, and x86-64's
 * branch keeps v's payload. The empty asm makes b's bits opaque to the compiler, so the select
 * stays a select. */
static inline float bq_select(int c, float a, float b) {
  uint32_t u = bq_bits(b);
  __asm__("" : "+r"(u));
  return c ? a : bq_float(u);
}

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

/* The same for four lanes: the result where no lane is NaN, else each NaN lane rebuilt from the
 * operands' bits as bq_nan_of does. */
static inline v128_t bq_nan_of_f32x4(v128_t r, v128_t a, v128_t b) {
  const v128_t q = wasm_i32x4_splat((int32_t)BQ_QUIET_BIT);
  const v128_t an = wasm_f32x4_ne(a, a), bn = wasm_f32x4_ne(b, b);
  const v128_t nan = wasm_v128_bitselect(
      wasm_v128_or(a, q),
      wasm_v128_bitselect(wasm_v128_or(b, q), wasm_i32x4_splat((int32_t)BQ_DEFAULT_NAN), bn), an);
  return wasm_v128_bitselect(nan, r, wasm_f32x4_ne(r, r));
}
#define BQ_FP_X4(name, op)                                                         \
  static inline v128_t name(v128_t a, v128_t b) {                                  \
    const v128_t r = op(a, b);                                                     \
    return wasm_v128_any_true(wasm_f32x4_ne(r, r)) ? bq_nan_of_f32x4(r, a, b) : r; \
  }
BQ_FP_X4(bq_add_f32x4, wasm_f32x4_add)
BQ_FP_X4(bq_sub_f32x4, wasm_f32x4_sub)
BQ_FP_X4(bq_mul_f32x4, wasm_f32x4_mul)
BQ_FP_X4(bq_div_f32x4, wasm_f32x4_div)
#undef BQ_FP_X4
#endif

#endif
