/* Scalar fp16 and bf16 conversions, bit-exact with ggml's reference ones. */
#include "internal.h"

/* fp32 -> IEEE binary16, round to nearest even. Subnormal halves are kept, values that round to
 * 65520 or more become infinity, and every NaN becomes sign | 0x7E00 (ggml drops the payload). */
uint16_t bq_fp32_to_fp16(float f) {
  const uint32_t x = bq_bits(f);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7FFFFFFF;
  if (ax > 0x7F800000) return sign | 0x7E00;
  if (ax >= 0x47800000) return sign | 0x7C00; /* >= 65536, or infinity */
  if (ax >= 0x38800000) {
    /* Normal half: rebias the exponent (127 -> 15, i.e. subtract 112 << 23) and round the
     * 23-bit mantissa to 10 bits. A carry out of the mantissa bumps the exponent, which is right,
     * and 65520..65535 carry into 0x7C00, which is infinity, also right. */
    uint32_t r = ax - 0x38000000;
    r += 0x0FFF + ((r >> 13) & 1);
    return sign | (uint16_t)(r >> 13);
  }
  if (ax < 0x33000000) return sign; /* below 2^-25: rounds to zero (2^-25 itself ties to even 0) */
  /* Subnormal half: the result counts units of 2^-24. |f| = mant * 2^(e-150), so the count is
   * mant >> (126 - e), rounded to nearest even; a count of 1024 is the smallest normal, 0x0400. */
  const uint32_t e = ax >> 23;
  const uint32_t mant = (ax & 0x7FFFFF) | 0x800000;
  const uint32_t shift = 126 - e; /* 14..24 */
  uint32_t m = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (m & 1))) m++;
  return sign | (uint16_t)m;
}

/* binary16 -> fp32, exact. A NaN comes out quiet (bit 22 set), as ggml's conversion, which passes
 * NaNs through a float multiply, gives on x86. */
float bq_fp16_to_fp32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  if (exp == 0x1F) return bq_float(sign | 0x7F800000 | (mant << 13) | (mant ? 0x400000 : 0));
  if (exp != 0) return bq_float(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return bq_float(sign);
  /* Subnormal: normalise. The value is mant * 2^-24. */
  uint32_t e = 113;
  while (!(mant & 0x400)) {
    mant <<= 1;
    e--;
  }
  return bq_float(sign | (e << 23) | ((mant & 0x3FF) << 13));
}

/* fp32 -> bf16, round to nearest even; a NaN is kept (top half) and forced quiet. */
uint16_t bq_fp32_to_bf16(float f) {
  const uint32_t u = bq_bits(f);
  if ((u & 0x7FFFFFFF) > 0x7F800000) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

float bq_bf16_to_fp32(uint16_t h) { return bq_float((uint32_t)h << 16); }
