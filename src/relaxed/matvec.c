/* The SIMD128 matvecs and dot-state sum, plus the relaxed build's prepared activations and its
 * dot-state sum. */
#include "../simd128/matvec.c"

#include "relaxed.h"

/* The prepared activations: static arrays in a single-threaded build, reached through
 * _Thread_local pointers so that each instance of the relaxed threads build points its own at a
 * block of its scratch (src/relaxed/threads.c), as simd128/matvec.c does for its own. */
static uint8_t rprep_q_main[(BQ_PREP_MAX_BLOCKS + 4) * BQ_B32] __attribute__((aligned(16)));
static float rprep_d_main[BQ_PREP_MAX_BLOCKS + 4] __attribute__((aligned(16)));
static float rprep_s_main[BQ_PREP_MAX_BLOCKS + 4] __attribute__((aligned(16)));
static int32_t rprep_sum_main[BQ_PREP_MAX_BLOCKS + 4] __attribute__((aligned(16)));
_Thread_local uint8_t *bq_rprep_q = rprep_q_main;
_Thread_local float *bq_rprep_d = rprep_d_main, *bq_rprep_s = rprep_s_main;
_Thread_local int32_t *bq_rprep_sum = rprep_sum_main;

int bq_rprepare_q8(const uint8_t *x, size_t nb, size_t bs, size_t qs_off, bq_rprep *out) {
  if (nb > BQ_PREP_MAX_BLOCKS) return 0;
  uint8_t *const rprep_q = bq_rprep_q;
  float *const rprep_d = bq_rprep_d, *const rprep_s = bq_rprep_s;
  int32_t *const rprep_sum = bq_rprep_sum;
  const bq_k k = bq_consts();
  const v128_t one = wasm_i8x16_splat(1), z = wasm_i32x4_splat(0);
  for (size_t i = 0; i < nb; i++, x += bs) {
    /* d and s converted exactly as the dot kernels do (bq_h2f_x4 on one lane). */
    const v128_t ds = wasm_v128_load32_zero(x);
    wasm_v128_store32_lane(rprep_d + i, bq_h2f_x4(&k, wasm_v128_and(ds, k.lo16)), 0);
    wasm_v128_store32_lane(rprep_s + i, bq_h2f_x4(&k, wasm_u32x4_shr(ds, 16)), 0);
    int32_t sum = 0;
    for (int h = 0; h < 2; h++) {
      const v128_t a = wasm_v128_load(x + qs_off + 16 * h);
      const size_t o = i * BQ_B32 + 16 * (size_t)h;
      wasm_v128_store(rprep_q + o, a);
      const v128_t s = bq_rdot(a, one, z);
      sum += wasm_i32x4_extract_lane(s, 0) + wasm_i32x4_extract_lane(s, 1) +
             wasm_i32x4_extract_lane(s, 2) + wasm_i32x4_extract_lane(s, 3);
    }
    rprep_sum[i] = sum;
  }
  /* Zero blocks up to the next group of 4, for the padded last group of each row. */
  for (size_t j = nb; j < ((nb + 3) & ~(size_t)3); j++) {
    rprep_d[j] = rprep_s[j] = 0.0f;
    rprep_sum[j] = 0;
    memset(rprep_q + j * BQ_B32, 0, BQ_B32);
  }
  out->q = rprep_q;
  out->sum = rprep_sum;
  out->d = rprep_d;
  out->s = rprep_s;
  out->nb = nb;
  return 1;
}

/* out = i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c) and out + 16 =
 * i16x8.relaxed_dot_i8x16_i7x16_s(a, b), of 16 bytes a and b and 4 i32 c: the probe js/loader.js
 * runs through the instance where it cannot compile its own probe module (runtimes that forbid
 * compiling wasm at run time). Each dot loads its own operands: Node 20's flagged relaxed dot gives
 * wrong sums or right ones depending on the code around it, and it gives them wrong in this shape
 * (the i32 dot on three fresh loads), as in the probe module; with the loads shared by both dots it
 * gave the right ones. */
void bq_relaxed_probe(const void *a, const void *b, const void *c, void *out) {
  wasm_v128_store(out, bq_rdot(wasm_v128_load(a), wasm_v128_load(b), wasm_v128_load(c)));
  wasm_v128_store((uint8_t *)out + 16, bq_rdot16(wasm_v128_load(a), wasm_v128_load(b)));
}

/* The relaxed dots keep the SIMD128 dots' 4-lane state. */
float bq_acc_sum__relaxed(const float *acc) { return bq_acc_sum__simd128(acc); }
