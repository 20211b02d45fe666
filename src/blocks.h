/* Every ggml block layout, as ggml-common.h lays them out, and the type table as compile-time
 * constants. Half values are raw IEEE binary16 bits; multi-byte fields are little-endian and are
 * read through memcpy or byte loads, since blocks arrive at any byte address (a Q4_0 block is 18
 * bytes, an MXFP4 block 17). Both kernel folders (and src/imat/) read blocks through these structs:
 * strides are sizeof, field positions offsetof. Each struct is checked where it is defined against
 * the type table (src/types.inc): its size is the table's type size; the block sizes the structs
 * assume are checked at the end. fields.inc lists every member (the JS side is generated from it).
 */
#ifndef BQ_BLOCKS_H
#define BQ_BLOCKS_H

#include <assert.h>
#include <stdint.h>

/* The type table as compile-time constants, per lowercase type name: BQ_ID_q4_0 (ggml id),
 * BQ_BLK_q4_0 (elements per block), BQ_SIZE_q4_0 (bytes per block), BQ_STEP_q4_0 (dot step),
 * BQ_SUB_q4_0 (stats sub-block), BQ_IMAT_q4_0 (1: ggml quantizes it only with an importance
 * matrix). Kernels and generic code take every size from here or from the block structs below,
 * never from a literal. */
enum {
#define BQ_TYPE(E, name, id, bs, ts, vd, step, sub, scale, imat)                     \
  BQ_ID_##name = id, BQ_BLK_##name = bs, BQ_SIZE_##name = ts, BQ_STEP_##name = step, \
  BQ_SUB_##name = sub, BQ_IMAT_##name = imat,
#include "types.inc"
#undef BQ_TYPE
};
#define BQ_TYPE(E, name, id, bs, ts, vd, step, sub, scale, imat)                      \
  static_assert(step == 0 || step % bs == 0, #name ": the dot step is whole blocks"); \
  static_assert(sub == 0 || bs % sub == 0, #name ": whole sub-blocks");
#include "types.inc"
#undef BQ_TYPE

/* The super-block of the K-quants, the grid types, IQ4_XS and the ternary types. */
#define QK_K 256

/* A block struct agrees with the type table: sizeof(block_<t>) is the table's type size. */
#define BQ_BLOCK_SIZE(t) static_assert(sizeof(block_##t) == BQ_SIZE_##t, #t ": block size")

/* ---- The simple blocks: 32 elements, one fp16 scale (and a min, or a sum for Q8_1) ---- */
typedef struct {
  uint16_t d;
  uint8_t qs[BQ_BLK_q4_0 / 2];
} block_q4_0;
BQ_BLOCK_SIZE(q4_0);
typedef struct {
  uint16_t d, m;
  uint8_t qs[BQ_BLK_q4_1 / 2];
} block_q4_1;
BQ_BLOCK_SIZE(q4_1);
typedef struct {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[BQ_BLK_q5_0 / 2];
} block_q5_0;
BQ_BLOCK_SIZE(q5_0);
typedef struct {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[BQ_BLK_q5_1 / 2];
} block_q5_1;
BQ_BLOCK_SIZE(q5_1);
typedef struct {
  uint16_t d;
  int8_t qs[BQ_BLK_q8_0];
} block_q8_0;
BQ_BLOCK_SIZE(q8_0);
typedef struct {
  uint16_t d, s;
  int8_t qs[BQ_BLK_q8_1];
} block_q8_1;
BQ_BLOCK_SIZE(q8_1);

/* ---- The newest simple blocks (ggml d99724f): 1- and 2-bit codes under one fp16 scale, and
 * NVFP4's four UE4M3-scaled sub-blocks of E2M1 codes ---- */
typedef struct {
  uint16_t d;
  uint8_t qs[BQ_BLK_q1_0 / 8]; /* element j: bit j % 8 of qs[j / 8]; set: +d, clear: -d */
} block_q1_0;
BQ_BLOCK_SIZE(q1_0);

typedef struct {
  uint16_t d;
  uint8_t qs[BQ_BLK_q2_0 / 4]; /* element j: bits 2 * (j % 4) of qs[j / 4], value (code - 1) * d */
} block_q2_0;
BQ_BLOCK_SIZE(q2_0);

/* NVFP4's sub-block: 16 elements under one scale byte. */
#define BQ_NVFP4_SUB 16
typedef struct {
  uint8_t d[BQ_BLK_nvfp4 / BQ_NVFP4_SUB]; /* UE4M3 scale of each sub-block (bit 7 unused) */
  uint8_t qs[BQ_BLK_nvfp4 / 2];           /* sub-block s at qs[8s..8s+7]: element 16s + j in the
                                             low nibble of qs[8s + j], 16s + j + 8 in its high one */
} block_nvfp4;
BQ_BLOCK_SIZE(nvfp4);

/* ---- The K-quants: super-blocks of QK_K elements ---- */
typedef struct {
  uint8_t scales[16]; /* low nibble: scale, high nibble: min, one byte per 16 elements */
  uint8_t qs[64];     /* 2-bit codes: element e at qs[32*(e/128) + e%32] >> 2*((e%128)/32) */
  uint16_t d, dmin;
} block_q2_K;
BQ_BLOCK_SIZE(q2_K);

typedef struct {
  uint8_t hmask[32];  /* bit e/32 of hmask[e%32] set: code has no -4 */
  uint8_t qs[64];     /* low 2 bits, as Q2_K */
  uint8_t scales[12]; /* 16 packed 6-bit scales, stored + 32 */
  uint16_t d;
} block_q3_K;
BQ_BLOCK_SIZE(q3_K);

typedef struct {
  uint16_t d, dmin;
  uint8_t scales[12]; /* 8 scales and 8 mins, 6 bits each (bq_scale_min_k4) */
  uint8_t qs[128];    /* element e at qs[32*(e/64) + e%32], low nibble if e%64 < 32 */
} block_q4_K;
BQ_BLOCK_SIZE(q4_K);

typedef struct {
  uint16_t d, dmin;
  uint8_t scales[12]; /* as Q4_K */
  uint8_t qh[32];     /* bit e/32 of qh[e%32]: the fifth bit of element e */
  uint8_t qs[128];    /* low 4 bits, as Q4_K */
} block_q5_K;
BQ_BLOCK_SIZE(q5_K);

typedef struct {
  uint8_t ql[128];   /* low 4 bits */
  uint8_t qh[64];    /* high 2 bits */
  int8_t scales[16]; /* one per 16 elements */
  uint16_t d;
} block_q6_K;
BQ_BLOCK_SIZE(q6_K);

typedef struct {
  float d;
  int8_t qs[QK_K];
  int16_t bsums[QK_K / 16]; /* bsums[j] = sum of qs[16j..16j+15] */
} block_q8_K;
BQ_BLOCK_SIZE(q8_K);

/* ---- IQ4_NL, IQ4_XS, MXFP4 and the ternary types ---- */
typedef struct {
  uint16_t d;
  uint8_t qs[16]; /* element j < 16: low nibble of qs[j]; element j + 16: its high nibble */
} block_iq4_nl;
BQ_BLOCK_SIZE(iq4_nl);

typedef struct {
  uint16_t d;
  uint16_t scales_h;   /* bits 2ib, 2ib+1: high two bits of sub-block ib's 6-bit scale */
  uint8_t scales_l[4]; /* low four bits of the scale of sub-block ib: nibble ib % 2 of [ib / 2] */
  uint8_t qs[128];     /* sub-block ib as one IQ4_NL block's qs, at qs[16 * ib] */
} block_iq4_xs;
BQ_BLOCK_SIZE(iq4_xs);

typedef struct {
  uint8_t e;      /* E8M0 shared exponent: the scale is 2^(e - 128), half the E8M0 value */
  uint8_t qs[16]; /* E2M1 codes, nibbles as IQ4_NL */
} block_mxfp4;
BQ_BLOCK_SIZE(mxfp4);

typedef struct {
  uint8_t qs[48]; /* 5 trits per byte: elements 0..159 (qs[0..31]), 160..239 (qs[32..47]) */
  uint8_t qh[4];  /* 4 trits per byte: elements 240..255 */
  uint16_t d;
} block_tq1_0;
BQ_BLOCK_SIZE(tq1_0);

typedef struct {
  uint8_t qs[64]; /* 2-bit codes, code - 1 in -1..2: element e at qs[32*(e/128) + e%32] >>
                     2*((e%128)/32) */
  uint16_t d;
} block_tq2_0;
BQ_BLOCK_SIZE(tq2_0);

/* ---- The grid types: QK_K elements in 8 sub-blocks of 32, each 4 groups of 8. A group is one grid
 * point (8 magnitudes, or 2 points of 4 for the IQ3 types) times a sign byte (bit j set: element j
 * negative) times the sub-block's (or half sub-block's) scale. ---- */
typedef struct {
  uint16_t d;
  uint8_t qs[64]; /* per sub-block ib, bytes 8ib..8ib+7: 4 grid indices, then a u32 whose bits
                     7g..7g+6 are group g's sign index and bits 28..31 the 4-bit scale */
} block_iq2_xxs;
BQ_BLOCK_SIZE(iq2_xxs);

typedef struct {
  uint16_t d;
  uint16_t qs[32];   /* group 4ib+g: bits 0..8 grid index, bits 9..15 sign index */
  uint8_t scales[8]; /* sub-block ib: low nibble groups 0-1, high nibble groups 2-3 */
} block_iq2_xs;
BQ_BLOCK_SIZE(iq2_xs);

typedef struct {
  uint16_t d;
  uint8_t qs[32];    /* low 8 bits of group 4ib+g's 10-bit grid index */
  uint8_t signs[32]; /* group 4ib+g's sign byte */
  uint8_t qh[8];     /* bits 2g..2g+1 of qh[ib]: index bits 8..9 of group g */
  uint8_t scales[8]; /* as IQ2_XS */
} block_iq2_s;
BQ_BLOCK_SIZE(iq2_s);

typedef struct {
  uint16_t d;
  uint8_t qs[64];  /* two grid indices per group: 8ib+2g (elements 0-3), 8ib+2g+1 (elements 4-7) */
  uint8_t sas[32]; /* sub-block ib: a u32, bits 7g..7g+6 sign index of group g, bits 28..31 scale */
} block_iq3_xxs;
BQ_BLOCK_SIZE(iq3_xxs);

typedef struct {
  uint16_t d;
  uint8_t qs[64];    /* low 8 bits of the 9-bit grid indices, two per group as IQ3_XXS */
  uint8_t qh[8];     /* bit k of qh[ib]: bit 8 of index qs[8ib+k] */
  uint8_t signs[32]; /* group 4ib+g's sign byte */
  uint8_t scales[4]; /* sub-block ib: nibble ib%2 of scales[ib/2] */
} block_iq3_s;
BQ_BLOCK_SIZE(iq3_s);

typedef struct {
  uint16_t d;
  uint8_t qs[32]; /* low 8 bits of group 4ib+g's 11-bit grid index */
  uint16_t qh[8]; /* sub-block ib: bits 3g..3g+2 index bits 8..10 of group g, bits 12..14 the
                     3-bit scale, bit 15 the delta's sign */
} block_iq1_s;
BQ_BLOCK_SIZE(iq1_s);

typedef struct {
  uint8_t qs[32];    /* low 8 bits of group 4ib+g's 11-bit grid index */
  uint8_t qh[16];    /* a nibble per group (qh[2ib+g/2], low for even g): bits 0..2 index bits
                        8..10, bit 3 the delta's sign */
  uint8_t scales[8]; /* 4 u16: 3-bit scales per 16 elements in bits 0..11, and the fp16 super-block
                        scale spread over bits 12..15 of the four */
} block_iq1_m;
BQ_BLOCK_SIZE(iq1_m);

/* The block sizes the structs assume (literal array sizes above count these elements). */
static_assert(BQ_BLK_q4_0 == 32 && BQ_BLK_q4_1 == 32 && BQ_BLK_q5_0 == 32 && BQ_BLK_q5_1 == 32 &&
                  BQ_BLK_q8_0 == 32 && BQ_BLK_q8_1 == 32,
              "32-element simple blocks (Q5's qh[4] holds 32 bits)");
static_assert(BQ_BLK_q6_K == QK_K && BQ_BLK_q8_K == QK_K && BQ_BLK_q2_K == QK_K &&
                  BQ_BLK_q3_K == QK_K && BQ_BLK_q4_K == QK_K && BQ_BLK_q5_K == QK_K,
              "K-quant super-blocks");
static_assert(BQ_BLK_iq4_nl == 32 && BQ_BLK_mxfp4 == 32, "32-element blocks, as Q8_0");
static_assert(BQ_BLK_iq4_xs == QK_K && BQ_BLK_tq1_0 == QK_K && BQ_BLK_tq2_0 == QK_K,
              "super-blocks");
static_assert(BQ_BLK_iq2_xxs == QK_K && BQ_BLK_iq2_xs == QK_K && BQ_BLK_iq2_s == QK_K &&
                  BQ_BLK_iq3_xxs == QK_K && BQ_BLK_iq3_s == QK_K && BQ_BLK_iq1_s == QK_K &&
                  BQ_BLK_iq1_m == QK_K,
              "grid super-blocks");
static_assert(BQ_BLK_nvfp4 % BQ_NVFP4_SUB == 0 && BQ_SUB_nvfp4 == BQ_NVFP4_SUB,
              "nvfp4: whole sub-blocks, each reported by the stats kernel");

#endif
