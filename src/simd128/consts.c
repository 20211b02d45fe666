/* The vector constants of the SIMD128 kernels, in memory. Kernels load the ones they use once, at
 * entry: written as literals, clang re-creates each constant at every use inside a loop
 * (v128.const), and V8 builds every one of those with several instructions. A table defined in
 * its own file is opaque to the compiler, so the loaded values stay in locals (registers). */
#include "simd.h"

#define S4(v) \
  { (v), (v), (v), (v) }
#define B16(v) S4((v)*0x01010101u)

bq_const_table bq_simd_consts = {
    .nib = B16(0x0F),
    .b8 = B16(8),
    .b16 = B16(16),
    .magic = S4(0x4B000000),   /* the float 2^23 */
    .off16 = S4(0x4B000010),   /* 2^23 + 16 */
    .magic16 = S4(0x4B004B00), /* u16 lanes holding the top half of 2^23 */
    .lo16 = S4(0xFFFF),
    .hmask = S4(0x8FFFE000), /* sign, exponent, mantissa of a half after the shift (bq_h2f_top) */
    .hexp = S4(0x0F800000),  /* its exponent */
    .x112 = S4(0x77800000),  /* 2^112 */
    .inf32 = S4(0x7F800000), /* also +Inf as a float */
    .hfill = S4(0x70000000), /* bits 28-30: exponent 31 -> 255 */
    .half = S4(0x3F000000),  /* 0.5f */
    .signbit = S4(0x80000000),
    .one = S4(0x3F800000),    /* 1.0f */
    .magic3 = S4(0x4B400000), /* 1.5 * 2^23: integers +-2^22 in its low mantissa bits */
    .abs32 = S4(0x7FFFFFFF),
    .rebias = S4(0x38000000), /* (127 - 15) << 23: f32 exponent -> f16 exponent */
    .r0fff = S4(0x0FFF),      /* round to nearest, ties handled by the odd bit */
    .one32 = S4(1),
    .x24 = S4(0x4B800000),          /* 2^24: |f| in units of the smallest f16 subnormal */
    .min_normal16 = S4(0x38800000), /* 2^-14 */
    .max_finite16 = S4(0x477FFFFF), /* below 65536: larger (and Inf) -> f16 Inf */
    .h_inf = S4(0x7C00),
    .h_nan = S4(0x7E00),
    .flip8 = B16(0x88), /* bit 3 of both nibbles */
    .hi_nib = B16(0xF0),
    .nib16 = S4(0x000F000F), /* the low nibble of each u16 lane */
};

/* For each byte value b, 8 bytes whose byte i is 0x10 when bit i of b is set: the 5th bits of 8 Q5
 * elements, ready to OR into their nibbles. Two 8-byte loads replace shuffles (which V8 builds
 * from materialised masks) when a qh word is spread over 16 elements. */
#define BQ_QH_BIT(b, i) ((((uint64_t)(b) >> (i)) & 1u) << (8 * (i) + 4))
#define BQ_QH_E(b)                                                                           \
  (BQ_QH_BIT(b, 0) | BQ_QH_BIT(b, 1) | BQ_QH_BIT(b, 2) | BQ_QH_BIT(b, 3) | BQ_QH_BIT(b, 4) | \
   BQ_QH_BIT(b, 5) | BQ_QH_BIT(b, 6) | BQ_QH_BIT(b, 7))
#define BQ_QH_E4(b) BQ_QH_E(b), BQ_QH_E((b) + 1), BQ_QH_E((b) + 2), BQ_QH_E((b) + 3)
#define BQ_QH_E16(b) BQ_QH_E4(b), BQ_QH_E4((b) + 4), BQ_QH_E4((b) + 8), BQ_QH_E4((b) + 12)
#define BQ_QH_E64(b) BQ_QH_E16(b), BQ_QH_E16((b) + 16), BQ_QH_E16((b) + 32), BQ_QH_E16((b) + 48)
uint64_t bq_qh_spread[256] = {BQ_QH_E64(0), BQ_QH_E64(64), BQ_QH_E64(128), BQ_QH_E64(192)};

/* Out of line so that the loops keep only the normal-scale path inline (see bq_h2f_pow2_bits). */
float bq_h2f_scaled_slow(uint16_t h, float scale) { return bq_h2f_scaled(h, scale); }

/* The main thread's scale slots (a worker's are in its block, threads.c). */
static uint32_t scale_slot_main[2];
_Thread_local uint32_t *bq_scale_slot = scale_slot_main, *bq_scale_slot_alias = scale_slot_main;
