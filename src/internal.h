/* Shared by the kernels: the block layouts (blocks.h), bit casts, and the scalar helpers the
 * reference uses. */
#ifndef BQ_INTERNAL_H
#define BQ_INTERNAL_H

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blocks.h"
#include "bq.h"
#include "fp.h" /* bq_bits, bq_float and arithmetic with x86-64 NaN results */

/* Byte offset of field f in a block of type t, and the bytes of one block. */
#define BQ_OFF(t, f) offsetof(block_##t, f)
#define BQ_BYTES(t) sizeof(block_##t)

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

/* The same cast to int, (int)(float): INT32_MIN for NaN and |x| >= 2^31 (x = -2^31 is in range). */
static inline int32_t bq_cvt_i32(float x) {
  if (!(x >= -2147483648.0f && x < 2147483648.0f)) return INT32_MIN;
  return (int32_t)x;
}

#endif
