/* Shared by the kernels: block layouts, bit casts, and the scalar helpers the reference uses. */
#ifndef BQ_INTERNAL_H
#define BQ_INTERNAL_H

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bq.h"

/* The type table as compile-time constants, per lowercase type name: BQ_ID_q4_0 (ggml id),
 * BQ_BLK_q4_0 (elements per block), BQ_SIZE_q4_0 (bytes per block), BQ_STEP_q4_0 (dot step),
 * BQ_SUB_q4_0 (stats sub-block). Kernels and generic code take every size from here or from the
 * block structs below, never from a literal. */
enum {
#define BQ_TYPE(E, name, id, bs, ts, vd, step, sub, scale)                           \
  BQ_ID_##name = id, BQ_BLK_##name = bs, BQ_SIZE_##name = ts, BQ_STEP_##name = step, \
  BQ_SUB_##name = sub,
#include "types.inc"
#undef BQ_TYPE
};
#define BQ_TYPE(E, name, id, bs, ts, vd, step, sub, scale)                            \
  static_assert(step == 0 || step % bs == 0, #name ": the dot step is whole blocks"); \
  static_assert(sub == 0 || bs % sub == 0, #name ": whole sub-blocks");
#include "types.inc"
#undef BQ_TYPE

/* Block layouts as ggml lays them out (ggml-common.h); half values are raw IEEE binary16 bits.
 * Both kernel folders read blocks through these: strides are sizeof, field positions offsetof. */
typedef struct {
  uint16_t d;
  uint8_t qs[BQ_BLK_q4_0 / 2];
} block_q4_0;
typedef struct {
  uint16_t d, m;
  uint8_t qs[BQ_BLK_q4_1 / 2];
} block_q4_1;
typedef struct {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[BQ_BLK_q5_0 / 2];
} block_q5_0;
typedef struct {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[BQ_BLK_q5_1 / 2];
} block_q5_1;
typedef struct {
  uint16_t d;
  int8_t qs[BQ_BLK_q8_0];
} block_q8_0;
typedef struct {
  uint16_t d, s;
  int8_t qs[BQ_BLK_q8_1];
} block_q8_1;

static_assert(sizeof(block_q4_0) == BQ_SIZE_q4_0, "q4_0 block");
static_assert(sizeof(block_q4_1) == BQ_SIZE_q4_1, "q4_1 block");
static_assert(sizeof(block_q5_0) == BQ_SIZE_q5_0, "q5_0 block");
static_assert(sizeof(block_q5_1) == BQ_SIZE_q5_1, "q5_1 block");
static_assert(sizeof(block_q8_0) == BQ_SIZE_q8_0, "q8_0 block");
static_assert(sizeof(block_q8_1) == BQ_SIZE_q8_1, "q8_1 block");

/* Byte offset of field f in a block of type t, and the bytes of one block. */
#define BQ_OFF(t, f) offsetof(block_##t, f)
#define BQ_BYTES(t) sizeof(block_##t)

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

/* Blocks arrive at any byte address (a Q4_0 block is 18 bytes), so multi-byte fields are read and
 * written through memcpy, which compiles to one unaligned load or store. */
static inline uint16_t bq_rd16(const void *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}

static inline uint32_t bq_rd32(const void *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static inline void bq_wr16(void *p, uint16_t v) { memcpy(p, &v, 2); }

static inline float bq_h2f(uint16_t h) { return bq_fp16_to_fp32(h); }

/* ggml converts with a C cast, (int8_t)(float) or (uint8_t)(float). C leaves NaN and out-of-range
 * values undefined; on x86-64, where ggml's reference vectors are made, the cast is cvttss2si into
 * a 32-bit register (NaN and |x| >= 2^31 give INT32_MIN) and the low byte is kept. We pin exactly
 * that, so the reference is defined on every compiler and matches ggml for NaN and Inf inputs. */
static inline uint8_t bq_cvt_u8(float x) {
  if (!(x >= -2147483648.0f && x < 2147483648.0f)) return 0; /* low byte of INT32_MIN */
  return (uint8_t)(uint32_t)(int32_t)x;
}

static inline int bq_cvt_i8(float x) { return (int8_t)bq_cvt_u8(x); }

#endif
