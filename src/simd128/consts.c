/* The vector constants of the SIMD128 kernels, in memory. Kernels load the ones they use once, at
 * entry: written as literals, clang re-creates each constant at every use inside a loop
 * (v128.const), and V8 builds every one of those with several instructions. A table defined in
 * its own file is opaque to the compiler, so the loaded values stay in locals (registers). */
#include "simd.h"

#define S4(v) {(v), (v), (v), (v)}
#define B16(v) S4((v) * 0x01010101u)

bq_const_table bq_simd_consts = {
    .nib = B16(0x0F),
    .b8 = B16(8),
    .b16 = B16(16),
    .b4 = B16(0x10),
    .flip = B16(0x80),
    .bits = {0x08040201, 0x80402010, 0x08040201, 0x80402010},
    .m15 = S4(15),
    .m15x16 = S4(0x000F000F),
    .b128x16 = S4(0x00800080),
    .magic = S4(0x4B000000),  /* the float 2^23 */
    .off8 = S4(0x4B000008),   /* 2^23 + 8 */
    .off16 = S4(0x4B000010),  /* 2^23 + 16 */
    .off128 = S4(0x4B000080), /* 2^23 + 128 */
    .magic16 = S4(0x4B004B00), /* u16 lanes holding the top half of 2^23 */
    .lo16 = S4(0xFFFF),
    .em = S4(0x7FFF),
    .sign16 = S4(0x8000),
    .x112 = S4(0x77800000),  /* 2^112 */
    .inf32 = S4(0x7F800000), /* also +Inf as a float */
    .e31 = S4(0x7C00),
    .quiet = S4(0x400000),
    .half = S4(0x3F000000),    /* 0.5f */
    .signbit = S4(0x80000000),
    .one = S4(0x3F800000),     /* 1.0f */
    .two31 = S4(0x4F000000),   /* 2^31 */
};
