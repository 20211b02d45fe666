/* The 4-bit non-linear formats IQ4_NL and IQ4_XS, MXFP4 and NVFP4, and the ternary formats TQ1_0
 * and TQ2_0: their value tables and helpers (MXFP4's and NVFP4's scale conversions and code
 * search among them), and the reference kernel prototypes (the IQ4 quantizers are in
 * src/imat/iq4.c). The block structs are in blocks.h.
 *
 * IQ4_NL and MXFP4 blocks hold 32 elements, NVFP4 blocks 64 (four sub-blocks of 16), the others
 * super-blocks of QK_K = 256. MXFP4's e is an E8M0 exponent byte, NVFP4's d[4] UE4M3 bytes. */
#ifndef BQ_IQUANTS4_H
#define BQ_IQUANTS4_H

#include "kquants.h"

/* Value tables (data, not code), ascending for IQ4_NL. bq_kvalues_iq4nl: ggml's kvalues_iq4nl;
 * bq_kvalues_mxfp4: ggml's kvalues_mxfp4, twice the E2M1 values. Both from src/ggml-common.h at
 * ggml commit d99724f2b141fed9e1a9f402213506c081433465; tests/native/test_golden_iq4.c checks
 * their SHA-256. */
extern const int8_t bq_kvalues_iq4nl[16];
extern const int8_t bq_kvalues_mxfp4[16];

/* ggml's best_index_int8 over the ascending 16-entry table v: the index of the entry nearest x,
 * an exact tie going to the larger entry; x below v[0] or above v[15] (or NaN) clamps to an end
 * (NaN to 15, as ggml's comparisons give). */
static inline int bq_iq4_best_index(const int8_t *v, float x) {
  if (x <= v[0]) return 0;
  if (x >= v[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (x < v[mid])
      hi = mid;
    else
      lo = mid;
  }
  return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

/* MXFP4's scale, ggml's GGML_E8M0_TO_FP32_HALF: 2^(e - 128) for every e (e = 0 and 1 are the
 * binary32 subnormals 2^-128 and 2^-127; e = 255 is 2^127, not NaN). */
static inline float bq_e8m0_half(uint8_t e) {
  return bq_float(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* The first code i whose value kvalues_mxfp4[i] * d is nearest x, ggml's best_index_mxfp4 (MXFP4
 * and NVFP4): a strict < over the 16 codes in order, so +0 beats -0 (code 8), the lower index wins
 * a tie, and a NaN x (or an error that is NaN or Inf for every code) gives code 0. */
static inline int bq_fp4_best_code(float x, float d) {
  int best = 0;
  float best_err = fabsf((float)bq_kvalues_mxfp4[0] * d - x);
  for (int i = 1; i < 16; i++) {
    const float err = fabsf((float)bq_kvalues_mxfp4[i] * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

/* NVFP4's sub-block scale, ggml's ggml_ue4m3_to_fp32 (ggml-impl.h): a UE4M3 byte (4 exponent bits,
 * bias 7, 3 mantissa bits; bit 7 ignored) as a float, halved to pair with the doubled E2M1 table.
 * 0x00 and 0x7F give 0 (0xFF does not: it reads as e = 15, m = 7, 240); exponent 0 is m * 2^-9,
 * halved m * 2^-10; otherwise (1 + m/8) * 2^(e-7), halved (8 + m) * 2^(e-11). ggml builds it with
 * ldexpf and a multiply by 0.5, both exact, so the bits are built directly. */
static inline float bq_ue4m3_half(uint8_t b) {
  if (b == 0 || b == 0x7F) return 0.0f;
  const uint32_t e = (uint32_t)(b >> 3) & 15, m = b & 7u;
  if (e == 0) return (float)m * 0x1p-10f;
  return bq_float((e + 119) << 23 | m << 20); /* 2^(e-8) * (1 + m/8) */
}

/* ggml_fp32_to_ue4m3: the UE4M3 byte of x > 0, 0 for NaN and x <= 0. x is clamped to 448; an
 * exponent below UE4M3's (x < 2^-6) takes round(x * 2^9) as ggml computes it, (int)(x * 512 + 0.5)
 * with its float rounding, capped at 7 (0 gives 0); otherwise the top 3 mantissa bits rounded up
 * on bit 19 (half up, not to even), a carry bumping the exponent; exponent 15 gives 0x7E. */
static inline uint8_t bq_ue4m3_from_f32(float x) {
  if (!(x > 0.0f)) return 0;
  if (x > 448.0f) x = 448.0f;
  const uint32_t u = bq_bits(x);
  int e = (int)(u >> 23 & 0xFF) - 127 + 7;
  if (e <= 0) {
    int m = (int)(x * 512.0f + 0.5f);
    if (m > 7) m = 7;
    return m < 1 ? 0 : (uint8_t)m;
  }
  if (e >= 15) return 0x7E;
  int m = (int)(u >> 20 & 7) + (int)(u >> 19 & 1);
  if (m > 7) {
    m = 0;
    if (++e >= 15) return 0x7E;
  }
  return (uint8_t)(e << 3 | m);
}

/* The ternary quantizers' trit: ggml's int xi = lroundf(v) + 1 (round half away from zero) as
 * x86-64 glibc gives it, where long is 64 bits and lroundf returns LONG_MIN for NaN, Inf and
 * |v| >= 2^63, so xi is then 1 (the low 32 bits of LONG_MIN + 1). Pinned here so the result does
 * not depend on the libm (wasm's long is 32 bits). Only its low bits reach the block bytes. */
static inline int bq_tq_trit(float v) {
  if (!(fabsf(v) < 0x1p63f)) return 1;
  float t = truncf(v); /* exact, and v - t is exact */
  if (fabsf(v - t) >= 0.5f) t += v < 0 ? -1.0f : 1.0f;
  return (int)(uint32_t)((uint64_t)(int64_t)t + 1u);
}

/* TQ1_0's trit k (0 = most significant) of a byte b stored as ceil(v * 256 / 243), 0..2: the
 * multiply by 3^k wraps mod 256, as in ggml. */
static inline int bq_tq1_trit(uint8_t b, int k) {
  static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
  return (uint8_t)(b * pow3[k]) * 3 >> 8;
}

/* 32 elements of 4-bit codes into a 16-entry table, laid out as IQ4_NL, MXFP4 and each IQ4_XS
 * sub-block lay them out (element j < 16: low nibble of qs[j]; j + 16: its high nibble): the values
 * d * table[code], and the integer dot with 32 int8 values q8 in ggml's order. */
static inline void bq_nl32_dequantize(const uint8_t *qs, const int8_t *table, float d, float *y) {
  for (int j = 0; j < 16; j++) {
    y[j] = d * (float)table[qs[j] & 0xF];
    y[j + 16] = d * (float)table[qs[j] >> 4];
  }
}

static inline int bq_nl32_dot(const uint8_t *qs, const int8_t *table, const int8_t *q8) {
  int sumi = 0;
  for (int j = 0; j < 16; j++) sumi += q8[j] * table[qs[j] & 0xF] + q8[j + 16] * table[qs[j] >> 4];
  return sumi;
}

/* The dot with Q8_0 of n elements of IQ4_NL or MXFP4 (blocks of block_bytes, the 16 code bytes at
 * qs_offset, the block's scale as scale gives it), as ggml's generic dots: per block,
 * sumf += (yd * xd) * (float)sumi, one running sum in acc[0]. */
int bq_nl32_dot_q8_0(const void *x, size_t block_bytes, size_t qs_offset, const int8_t *table,
                     float (*scale)(const uint8_t *block), const void *y, size_t n, float *acc);

/* The reference kernels. Each returns BQ_OK, or BQ_EINVAL and writes nothing when n is not a
 * multiple of the block size (32 for IQ4_NL and MXFP4, 256 for the others). The dots keep ggml's
 * one running sum in acc[0] (the default left-to-right lane sum reads it); <t>_dot_f32 adds the
 * dequantized value times y, element by element, into acc[0]. */
BQ_REF_ROW_PROTOS(iq4_nl)
BQ_REF_ROW_PROTOS(iq4_xs)
BQ_REF_ROW_PROTOS(mxfp4)
BQ_REF_ROW_PROTOS(nvfp4)
BQ_REF_ROW_PROTOS(tq1_0)
BQ_REF_ROW_PROTOS(tq2_0)
BQ_DOT_PROTO(iq4_nl, q8_0, __ref);
BQ_DOT_PROTO(mxfp4, q8_0, __ref);
BQ_DOT_PROTO(nvfp4, q8_0, __ref);
BQ_DOT_PROTO(iq4_xs, q8_K, __ref);
BQ_DOT_PROTO(tq1_0, q8_K, __ref);
BQ_DOT_PROTO(tq2_0, q8_K, __ref);

#endif
