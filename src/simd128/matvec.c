/* SIMD128 matrix-vector products (rows of SIMD dots) and the SIMD128 dot-state sum. */
#include <wasm_simd128.h>

#include "../generic.h"
#include "simd.h"

/* One matvec call's activations, prepared once for all rows: the int8 codes widened to int16 (so a
 * row's inner loop loads them instead of widening them again), for Q4 rows in the order their
 * nibbles come out of u16 lanes and with each block's code sum (so Q4_0 subtracts 8 * sum once per
 * block instead of 8 from every weight), and d, s as floats. No kernel allocates: the arrays
 * are static for the main thread, and each worker of the threads build has its own (threads.c),
 * reached through the _Thread_local pointers. */
static int16_t prep_q_main[(BQ_PREP_MAX_BLOCKS + 4) * BQ_B32] __attribute__((aligned(16)));
static float prep_d_main[BQ_PREP_MAX_BLOCKS + 4] __attribute__((aligned(16)));
static float prep_s_main[BQ_PREP_MAX_BLOCKS + 4] __attribute__((aligned(16)));
static int32_t prep_sum_main[BQ_PREP_MAX_BLOCKS + 4] __attribute__((aligned(16)));
_Thread_local int16_t *bq_prep_q = prep_q_main;
_Thread_local float *bq_prep_d = prep_d_main, *bq_prep_s = prep_s_main;
_Thread_local int32_t *bq_prep_sum = prep_sum_main;

/* Where element j of a block goes in BQ_PREP_NIBBLES order (see simd.h). */
static size_t nibble_slot(size_t j) { return (j & 16) + ((j & 1) << 3) + ((j & 15) >> 1); }

int bq_prepare_q8(const uint8_t *x, size_t nb, size_t bs, size_t qs_off, int order, bq_prep *out) {
  if (nb > BQ_PREP_MAX_BLOCKS) return 0;
  const bq_k k = bq_consts();
  int16_t *prep_q = bq_prep_q;
  float *prep_d = bq_prep_d, *prep_s = bq_prep_s;
  int32_t *prep_sum = bq_prep_sum;
  size_t i = 0;
  for (; i + 4 <= nb; i += 4, x += 4 * bs) {
    /* d (and s, when the codes start at 4) of 4 blocks, converted exactly as the dot kernels do. */
    const v128_t ds = bq_load_u32x4(x, bs);
    wasm_v128_store(prep_d + i, bq_h2f_x4(&k, wasm_v128_and(ds, k.lo16)));
    wasm_v128_store(prep_s + i, bq_h2f_x4(&k, wasm_u32x4_shr(ds, 16)));
    v128_t sums[4];
    for (int b = 0; b < 4; b++) {
      const v128_t q0 = wasm_v128_load(x + b * bs + qs_off),
                   q1 = wasm_v128_load(x + b * bs + qs_off + 16);
      int16_t *o = prep_q + (i + b) * BQ_B32;
      if (order == BQ_PREP_NIBBLES) {
        /* Even and odd bytes of each half, sign-extended within u16 lanes. */
        const v128_t e0 = wasm_i16x8_shr(wasm_i16x8_shl(q0, 8), 8), o0 = wasm_i16x8_shr(q0, 8);
        const v128_t e1 = wasm_i16x8_shr(wasm_i16x8_shl(q1, 8), 8), o1 = wasm_i16x8_shr(q1, 8);
        wasm_v128_store(o, e0);
        wasm_v128_store(o + 8, o0);
        wasm_v128_store(o + 16, e1);
        wasm_v128_store(o + 24, o1);
        /* |sum| <= 4 * 128 in each i16 lane */
        const v128_t s16 = wasm_i16x8_add(wasm_i16x8_add(e0, o0), wasm_i16x8_add(e1, o1));
        sums[b] = wasm_i32x4_dot_i16x8(s16, wasm_i16x8_splat(1));
      } else {
        wasm_v128_store(o, wasm_i16x8_extend_low_i8x16(q0));
        wasm_v128_store(o + 8, wasm_i16x8_extend_high_i8x16(q0));
        wasm_v128_store(o + 16, wasm_i16x8_extend_low_i8x16(q1));
        wasm_v128_store(o + 24, wasm_i16x8_extend_high_i8x16(q1));
      }
    }
    if (order == BQ_PREP_NIBBLES)
      wasm_v128_store(prep_sum + i, bq_hsum4_i32(sums[0], sums[1], sums[2], sums[3]));
  }
  for (; i < nb; i++, x += bs) {
    prep_d[i] = bq_h2f_fast(bq_rd16(x));
    prep_s[i] = bq_h2f_fast(bq_rd16(x + 2));
    int32_t sum = 0;
    for (size_t j = 0; j < BQ_B32; j++) {
      prep_q[i * BQ_B32 + (order == BQ_PREP_NIBBLES ? nibble_slot(j) : j)] = (int8_t)x[qs_off + j];
      sum += (int8_t)x[qs_off + j];
    }
    prep_sum[i] = sum;
  }
  /* Zero blocks up to the next group of 4, for the padded last group of each row. */
  for (size_t j = nb; j < ((nb + 3) & ~(size_t)3); j++) {
    prep_d[j] = prep_s[j] = 0.0f;
    prep_sum[j] = 0;
    memset(prep_q + j * BQ_B32, 0, BQ_B32 * sizeof(int16_t));
  }
  out->q = prep_q;
  out->sum = prep_sum;
  out->d = prep_d;
  out->s = prep_s;
  out->nb = nb;
  return 1;
}

/* The four lanes of a SIMD dot state, summed pairwise: (a0 + a1) + (a2 + a3). The SIMD128 dots
 * use acc[0..3] only; the other BQ_ACC_LANES stay zero. */
float bq_acc_sum__simd128(const float *acc) { return (acc[0] + acc[1]) + (acc[2] + acc[3]); }

#define BQ_QUANTIZE(t, isa)
#define BQ_QUANTIZE_ROWS(t, isa)
#define BQ_DEQUANTIZE(t, isa)
#define BQ_STATS(t, isa)
#define BQ_DOT(t, t2, isa)
/* Rows against f32 are generic; the integer pairs (t2 = q8_0, q8_1) live in each weight type's
 * file, on activations prepared once per call (bq_prepare_q8 below). */
#define BQ_MATVEC_GEN_f32(t) BQ_DEFINE_MATVEC(t, f32, __simd128)
#define BQ_MATVEC_GEN_q8_0(t)
#define BQ_MATVEC_GEN_q8_1(t)
#define BQ_MATVEC_GEN_q8_K(t)
#define BQ_MATVEC_SIMD(t, t2) BQ_MATVEC_GEN_##t2(t)
#define BQ_MATVEC_REF(t, t2)
#define BQ_MATVEC_RELAXED BQ_MATVEC_SIMD
#define BQ_MATVEC(t, t2, isa) BQ_MATVEC_##isa(t, t2)
#include "../kernels.inc"
