/* Exhaustive checks of the scalar fp16/bf16 conversions: all 2^32 floats and all 65536 halves.
 * The oracles are independent of src/half.c: the compiler's own _Float16 conversion (IEEE
 * round-to-nearest-even) for fp16, and integer arithmetic on the bit pattern for bf16. */
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "../../src/bq.h"
#include "check.h"

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The compiler's conversion, done in hardware (F16C) where the CPU has it: a software _Float16
 * conversion takes minutes over 2^32 inputs, the instruction seconds. */
#if defined(__x86_64__)
__attribute__((target("f16c"))) static uint16_t oracle_f16c(float f) {
  return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}
#endif

static uint16_t oracle_soft(float f) {
  _Float16 c = (_Float16)f;
  uint16_t h;
  memcpy(&h, &c, 2);
  return h;
}

int main(void) {
  uint16_t (*oracle)(float) = oracle_soft;
  uint64_t step = 97; /* without F16C: every 97th float, which still crosses every rounding case */
#if defined(__x86_64__)
  if (__builtin_cpu_supports("f16c")) oracle = oracle_f16c, step = 1;
#endif
  printf("fp16 oracle: %s\n", step == 1 ? "F16C, all 2^32 floats" : "_Float16, every 97th float");
  uint64_t u = 0;
  do {
    const float f = from_bits((uint32_t)u);
    const uint16_t h = bq_fp32_to_fp16(f);
    const int nan = (u & 0x7FFFFFFF) > 0x7F800000;
    if (nan) {
      CHECK(h == (((u >> 16) & 0x8000) | 0x7E00), "fp16 of NaN %08x -> %04x", (unsigned)u, h);
    } else {
      const uint16_t want = oracle(f);
      CHECK(h == want, "fp16(%08x) = %04x, want %04x", (unsigned)u, h, want);
    }
    /* bf16: the exact value of the top half plus a round bit, ties to even, computed with 64-bit
     * integers on the magnitude. */
    const uint16_t b = bq_fp32_to_bf16(f);
    if (nan) {
      CHECK(b == (uint16_t)((u >> 16) | 0x40), "bf16 NaN %08x", (unsigned)u);
    } else {
      const uint64_t mag = u & 0x7FFFFFFF, lo = mag & 0xFFFF;
      uint64_t top = mag >> 16;
      if (lo > 0x8000 || (lo == 0x8000 && (top & 1))) top++;
      CHECK(b == (uint16_t)(top | ((u >> 16) & 0x8000)), "bf16(%08x) = %04x", (unsigned)u, b);
    }
  } while ((u += step) <= 0xFFFFFFFFu);

  for (uint32_t h = 0; h < 65536; h++) {
    uint16_t hh = (uint16_t)h;
    _Float16 c;
    memcpy(&c, &hh, 2);
    const float want = (float)c, got = bq_fp16_to_fp32(hh);
    if ((h & 0x7FFF) > 0x7C00) {
      CHECK(got != got && (bits(got) & 0x400000) &&
                ((bits(got) >> 13) & 0x3FF) == ((h & 0x3FF) | 0x200) &&
                (bits(got) >> 31) == (h >> 15),
            "fp16 NaN %04x -> %08x", h, bits(got));
    } else {
      CHECK(bits(got) == bits(want), "fp16->fp32 %04x: %08x want %08x", h, bits(got), bits(want));
      CHECK(bq_fp32_to_fp16(got) == hh, "round trip %04x", h);
    }
    CHECK(bits(bq_bf16_to_fp32(hh)) == h << 16, "bf16->fp32 %04x", h);
  }
  return check_report("native half (exhaustive)");
}
