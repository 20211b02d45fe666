/* Q8_K SIMD128: the activation quantizer (bit-exact with ref/q8_K.c) and the preparation of Q8_K
 * activations for the Q4_K/Q5_K matvecs. */
#include "kq45.h"

enum {
  YS = sizeof(block_q8_K),
  YD = offsetof(block_q8_K, d),
  YQS = offsetof(block_q8_K, qs),
  YBS = offsetof(block_q8_K, bsums)
};

#define S4(v) \
  { (v), (v), (v), (v) }
bq_kq_const_table bq_kq_consts_mem = {
    .lo8 = S4(0x00FF00FFu),
    .b10 = S4(0x10101010u),
    .sc_lo = {0x3F3F3F3Fu, 0x0F0F0F0Fu, 0x3F3F3F3Fu, 0}, /* w0's and w1's low 6 bits, w2's low 4 */
    .b30 = S4(0x30303030u),
};

/* The main thread's scale slots (a worker's are in its block, threads.c). */
static float kq_slot_main[32];
_Thread_local float *bq_kq_slot = kq_slot_main, *bq_kq_slot_alias = kq_slot_main;

/* One block by vectors; 0 (nothing written) when the result depends on what the vector path does
 * not model, left to the reference: a NaN or Inf input (the running sum catches them, and also,
 * harmlessly, a sum that overflows), a largest magnitude held with both signs (the first one
 * wins), and a max so small that -127 / max overflows.
 *
 * The reference's amax scan skips NaN and keeps the first largest |x|; pmax/pmin with the running
 * value first skip NaN the same way, and starting both at 0 makes amax = max(MX, -MN). Codes are
 * bq_nearest_int of iscale * x: for |v| <= 127 the magic 1.5 * 2^23 leaves the integer in the low
 * mantissa bits, taken out by an integer subtract of the magic's bits. */
static inline int quantize_block(const bq_k *k, const float *x, uint8_t *o) {
  const v128_t zero = wasm_f32x4_splat(0.0f);
  v128_t mx = zero, mn = zero, sum = zero;
  for (int j = 0; j < QK_K; j += 4) {
    const v128_t v = wasm_v128_load(x + j);
    mx = wasm_f32x4_pmax(mx, v);
    mn = wasm_f32x4_pmin(mn, v);
    sum = wasm_f32x4_add(sum, v);
  }
  if (!wasm_i32x4_all_true(wasm_f32x4_lt(wasm_f32x4_abs(sum), k->inf32))) return 0;
  /* The scalar decisions below are made on vectors holding the same value in every lane (a
   * lane-wise select is the reference's ?:), so no lane is moved out inside the caller's loop. */
  mx = wasm_f32x4_pmax(mx, wasm_i32x4_shuffle(mx, mx, 2, 3, 0, 1));
  mn = wasm_f32x4_pmin(mn, wasm_i32x4_shuffle(mn, mn, 2, 3, 0, 1));
  const v128_t M = wasm_f32x4_pmax(mx, wasm_i32x4_shuffle(mx, mx, 1, 0, 3, 2));
  const v128_t m = wasm_f32x4_pmin(mn, wasm_i32x4_shuffle(mn, mn, 1, 0, 3, 2));
  const v128_t nm = wasm_f32x4_neg(m);
  const v128_t amax = wasm_v128_bitselect(M, nm, wasm_f32x4_gt(M, nm)); /* M > -m ? M : -m */
  if (wasm_v128_any_true(wasm_f32x4_eq(amax, zero))) {
    memset(o, 0, YS); /* as the reference */
    return 1;
  }
  if (wasm_v128_any_true(wasm_f32x4_eq(M, nm))) return 0;
  const v128_t vis =
      wasm_f32x4_div(wasm_f32x4_splat(-127.f), wasm_v128_bitselect(M, m, wasm_f32x4_eq(M, amax)));
  if (!wasm_i32x4_all_true(wasm_f32x4_lt(wasm_f32x4_abs(vis), k->inf32))) return 0;
  const v128_t lim = wasm_i32x4_splat(127);
  v128_t bs[4];
  for (int g4 = 0; g4 < 4; g4++) {
    v128_t s[4];
    for (int g = 0; g < 4; g++) {
      const float *p = x + 64 * g4 + 16 * g;
      v128_t c[4];
      for (int j = 0; j < 4; j++) {
        const v128_t t = wasm_f32x4_add(wasm_f32x4_mul(vis, wasm_v128_load(p + 4 * j)), k->magic3);
        c[j] = wasm_i32x4_min(wasm_i32x4_sub(t, k->magic3), lim);
      }
      wasm_v128_store(o + YQS + 64 * g4 + 16 * g,
                      wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(c[0], c[1]),
                                              wasm_i16x8_narrow_i32x4(c[2], c[3])));
      s[g] = wasm_i32x4_add(wasm_i32x4_add(c[0], c[1]), wasm_i32x4_add(c[2], c[3]));
    }
    bs[g4] = bq_hsum4_i32(s[0], s[1], s[2], s[3]);
  }
  wasm_v128_store(o + YBS, wasm_i16x8_narrow_i32x4(bs[0], bs[1]));
  wasm_v128_store(o + YBS + 16, wasm_i16x8_narrow_i32x4(bs[2], bs[3]));
  wasm_v128_store32_lane(o + YD, wasm_f32x4_div(wasm_f32x4_splat(1.f), vis), 0); /* 1 / iscale */
  return 1;
}

BQ_QUANTIZE_PROTO(q8_K, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const bq_k k = bq_consts();
  uint8_t *o = y;
  for (size_t i = 0; i < n / QK_K; i++, x += QK_K, o += YS)
    if (!quantize_block(&k, x, o)) bq_q8_K_quantize__ref(x, o, QK_K);
  return BQ_OK;
}

/* Matvec activations (bq_kq_prepare): as simd128/matvec.c's, static for the main thread and a
 * worker's own in the threads build (threads.c); rows longer than this use plain dots. */
static int16_t kq_prep_q_main[BQ_KQ_PREP_MAX * QK_K] __attribute__((aligned(16)));
static float kq_prep_d_main[BQ_KQ_PREP_MAX];
_Thread_local int16_t *bq_kq_prep_q = kq_prep_q_main;
_Thread_local float *bq_kq_prep_d = kq_prep_d_main;

int bq_kq_prepare(const uint8_t *x, size_t nb, bq_kq_prep *out) {
  if (nb > BQ_KQ_PREP_MAX) return 0;
  int16_t *prep_q = bq_kq_prep_q;
  float *prep_d = bq_kq_prep_d;
  for (size_t i = 0; i < nb; i++, x += YS) {
    memcpy(&prep_d[i], x + YD, sizeof(float));
    const bq_kq_act a = {(const int8_t *)(x + YQS), NULL};
    for (int g = 0; g < QK_K / 16; g++) {
      v128_t e, o;
      bq_kq_act16(a, g, &e, &o);
      wasm_v128_store(prep_q + i * QK_K + 16 * g, e);
      wasm_v128_store(prep_q + i * QK_K + 16 * g + 8, o);
    }
  }
  out->q = prep_q;
  out->d = prep_d;
  return 1;
}
