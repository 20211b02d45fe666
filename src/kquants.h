/* The K-quant (super-block) formats Q2_K..Q6_K and the activation format Q8_K: the helpers their
 * reference kernels share (src/ref/kquants.c: the quantizer fits, scale packing, a block decoded
 * to integers) and the kernel prototypes. The block structs are in blocks.h.
 *
 * A super-block holds QK_K = 256 elements; every n below must be a multiple of 256. */
#ifndef BQ_KQUANTS_H
#define BQ_KQUANTS_H

#include "internal.h"

/* ggml's nearest_int: add 1.5 * 2^23 and keep the low 23 bits of the sum, minus 2^22. For
 * |v| <= 4194303 that is round to nearest, ties to even. ggml only asserts the range (compiled out
 * in its release builds), so outside it we return the same bits x86-64 gives: Inf gives -2^22,
 * huge values whatever the sum's mantissa holds. A NaN sum on x86-64 is the NaN operand quieted,
 * so the result is its payload | 2^22, minus 2^22 (0 for the default NaN); we build that from v's
 * bits rather than from the sum, since wasm may canonicalize NaN results of arithmetic. */
static inline int bq_nearest_int(float v) {
  uint32_t u = bq_bits(v + 12582912.0f);
  if (v != v) u = bq_bits(v) | 0x400000u;
  return (int)(u & 0x7FFFFFu) - 0x400000;
}

/* ggml's get_scale_min_k4: the 6-bit scale and min of sub-block j (0..7) of Q4_K/Q5_K. */
static inline void bq_scale_min_k4(int j, const uint8_t *s, uint8_t *sc, uint8_t *m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (uint8_t)((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
    *m = (uint8_t)((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

/* The 6-bit value j (0..15) of Q3_K's packed scales, 0..63 (the scale is that minus 32). */
static inline int bq_q3_K_scale(const uint8_t *s, int j) {
  const int lo = j < 8 ? s[j] & 0xF : s[j - 8] >> 4;
  return lo | ((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4;
}

/* Quantizer helpers, ports of ggml's with its float operation order (src/ref/kquants.c), shared
 * by the quantizers with and without importance weights (src/imat/). Each fits the n values x,
 * writes codes to L and returns the scale; they allocate nothing. Their arithmetic gives x86-64's
 * NaN results (fp.h), so NaN inputs give ggml's codes. */

/* Affine fit x ~ scale * L + min, L in 0..nmax, weighted by w: ggml's make_qkx2_quants, and its
 * make_qkx3_quants whenever weights are given (the two differ only without them). *the_min gets
 * -min (>= 0). Laux is scratch of n bytes. */
float bq_make_qkx2_quants(int n, int nmax, const float *x, const float *w, uint8_t *L,
                          float *the_min, uint8_t *Laux, float rmin, float rdelta, int nstep,
                          int use_mad);

/* Symmetric fit x ~ scale * (L - nmax), L in 0..2*nmax-1 (make_qx_quants with rmse_type 1),
 * weighted by qw, or by x*x where qw is NULL. All-zero input (max |x| < 1e-15): L = 0, returns 0.
 */
float bq_make_qx_quants(int n, int nmax, const float *x, const float *qw, int8_t *L);

/* Symmetric fit with iterative refinement (make_q3_quants with do_rmse): L in 0..2*nmax-1 (stored
 * + nmax), except all-zero input (max |x| < 1e-15): L = 0, returns 0. */
float bq_make_q3_quants(int n, int nmax, const float *x, int8_t *L);

/* Steps shared by the Q4_K and Q5_K quantizers (nmax 15, rmin -1, nstep 20 / nmax 31, rmin -0.5,
 * nstep 15): fits the 8 sub-blocks of the 256 values x, packs their 6-bit scales and mins into
 * scales[12], writes the fp16 d and dmin, and leaves the codes 0..nmax in L[256]. */
void bq_q45_K_fit(const float *x, int nmax, float rmin, int nstep, uint8_t *L, uint8_t *scales,
                  uint16_t *d, uint16_t *dmin);

/* Packs the 6-bit value l (0..63, the scale + 32) of Q3_K sub-block j (0..15) into scales[12],
 * which start zeroed and get j = 0..15 in order. */
void bq_q3_K_pack_scale(int j, int l, uint8_t *scales);

/* Q3_K's scale step of quantize_row_q3_K_ref: the 16 sub-blocks' scales as 6-bit values against
 * the one of largest |scale| (packed into b's scales) and d = 1 / (-32 / that scale). */
void bq_q3_K_scales(const float *scales, block_q3_K *b);

/* Q3_K's last steps, once scales and d are stored in b: the codes of the 256 values x against
 * them (a sub-block whose d * scale is 0 keeps the codes 0..7 its fit left in L), then
 * bq_q3_K_pack_codes. */
void bq_q3_K_finish(const float *x, int8_t *L, block_q3_K *b);

/* The codes L[256] (0..7; left as 0..3) into b: the high bits into hmask, the low two into qs. */
void bq_q3_K_pack_codes(int8_t *L, block_q3_K *b);

/* Q2_K's scale step of quantize_row_q2_K_ref: the 16 sub-blocks' scales and mins (-min) as
 * 4-bit codes against the largest of each (no clamp, as ggml), and d, dmin (the largest / 15). */
void bq_q2_K_scales(const float *scales, const float *mins, block_q2_K *b);

/* Q2_K's last step: the codes 0..3 of the 256 values x against the stored scales, d and dmin of
 * b, L = nearest_int((x + dmin * min) / (d * scale)) per 16; a sub-block whose d * scale is 0
 * keeps the codes its fit left in L. */
void bq_q2_K_requantize(const float *x, const block_q2_K *b, uint8_t *L);

/* Q6_K's scale step: the 16 sub-blocks' scales as int8 against the one of largest |scale|
 * (min(127, .), no lower clamp) and d = 1 / (-128 / that scale); 0 (b all zero) when every
 * |scale| is below 1e-15, else 1. */
int bq_q6_K_scales(const float *scales, block_q6_K *b);

/* The codes L[256] (0..63) into b's ql (low 4 bits) and qh (high 2). */
void bq_q6_K_pack_codes(const int8_t *L, block_q6_K *b);

/* One Q6_K super-block of the 256 values x, as quantize_row_q6_K_ref (qw NULL) or, with the 256
 * importance weights qw of its columns, quantize_row_q6_K_impl (which uses them directly). */
void bq_q6_K_quantize_block(const float *x, const float *qw, block_q6_K *b);

/* Q4_K/Q5_K's scale step of quantize_row_q4_K_ref / q5_K_ref: the 8 sub-blocks' scales sc and
 * mins (-min, >= 0) as 6-bit codes against the largest of each, packed into scales[12], and d,
 * dmin (the largest / 63 as halves). */
void bq_q45_K_scales(const float *sc, const float *mins, uint8_t *scales, uint16_t *d,
                     uint16_t *dmin);

/* Packs sub-block j's scale code ls and min code lm into Q4_K/Q5_K's scales[12] as ggml does,
 * called for j = 0..7 in order (sub-blocks 4..7 add their top bits to bytes 0..7). */
void bq_q45_K_pack_scale(int j, uint8_t ls, uint8_t lm, uint8_t *scales);

/* The last step of a Q4_K/Q5_K quantizer: the codes 0..nmax of the 256 values x against the
 * stored scales and fp16 d, dmin, L = nearest_int((x + dmin * m) / (d * sc)); a sub-block whose
 * d * sc is 0 keeps the codes its fit left in L. */
void bq_q45_K_requantize(const float *x, int nmax, const uint8_t *scales, uint16_t d, uint16_t dmin,
                         uint8_t *L);

/* Quantize, dequantize and the f32 dot of a reference type t: the prototypes every K-quant type
 * and every type of iquants4.h declares. */
#define BQ_REF_ROW_PROTOS(t)     \
  BQ_QUANTIZE_PROTO(t, __ref);   \
  BQ_DEQUANTIZE_PROTO(t, __ref); \
  BQ_DOT_PROTO(t, f32, __ref);

/* The two row kernels a reference type of qk-element blocks builds the same way from its file's
 * static dequantize_block(const uint8_t *block, float *y) (one block, exactly as ggml's
 * dequantize_row_<t>): dequantize, and the fused f32 dot, which adds each dequantized value times
 * the f32 value into acc[0] in element order. Both return BQ_EINVAL when n is not a multiple of
 * qk. */
#define BQ_REF_ROW_KERNELS(t, qk)                                                 \
  BQ_DEQUANTIZE_PROTO(t, __ref) {                                                 \
    if (n % (qk)) return BQ_EINVAL;                                               \
    for (size_t i = 0; i < n / (qk); i++)                                         \
      dequantize_block((const uint8_t *)x + i * sizeof(block_##t), y + i * (qk)); \
    return BQ_OK;                                                                 \
  }                                                                               \
  BQ_DOT_PROTO(t, f32, __ref) {                                                   \
    if (n % (qk)) return BQ_EINVAL;                                               \
    const float *v = y;                                                           \
    float sumf = acc[0], w[qk];                                                   \
    for (size_t i = 0; i < n / (qk); i++, v += (qk)) {                            \
      dequantize_block((const uint8_t *)x + i * sizeof(block_##t), w);            \
      for (int e = 0; e < (qk); e++) sumf += w[e] * v[e];                         \
    }                                                                             \
    acc[0] = sumf;                                                                \
    return BQ_OK;                                                                 \
  }

/* Packs 2-bit codes L[256] (0..3) into qs[64] as Q2_K and Q3_K store them: element e at
 * qs[32*(e/128) + e%32], bits 2*((e%128)/32). */
void bq_kq_pack_2bit(const uint8_t *L, uint8_t *qs);

/* Packs Q5_K's codes L[256] (0..31; left as their low 4 bits) into b's qh (the fifth bits) and
 * qs. */
void bq_q5_K_pack_codes(uint8_t *L, block_q5_K *b);

/* Packs 4-bit codes L[256] (0..15) into qs[128] as Q4_K and Q5_K store them: element e at
 * qs[32*(e/64) + e%32], the low nibble if e%64 < 32. */
void bq_q45_K_pack_4bit(const uint8_t *L, uint8_t *qs);

/* One super-block of Q2_K..Q6_K decoded to plain integers: codes q[e], the scale and min of each
 * 16 elements (Q4_K and Q5_K repeat theirs per 32; min all 0 where has_min is 0) and the fp16 d
 * and dmin. A bq_kq_decode function fills it from a block's bytes. */
typedef struct {
  int8_t q[QK_K];
  int scale[16], min[16];
  uint16_t d, dmin;
  int has_min;
} bq_kq_block;
typedef void bq_kq_decode(const uint8_t *block, bq_kq_block *k);

/* The part of a Q4_K or Q5_K decode the two share: the 8 scales and mins of the packed scales[12]
 * (bq_scale_min_k4), each repeated for both 16s of its 32, and d, dmin. */
void bq_q45_K_decode_scales(const uint8_t *scales, uint16_t d, uint16_t dmin, bq_kq_block *k);

/* One block decoded as ggml's dequantize_row_<t> for Q2_K..Q6_K: element e is
 * (d * scale) * q - (dmin * min) of its 16, or (d * scale) * q where has_min is 0. */
void bq_kq_dequantize_block(const uint8_t *block, bq_kq_decode *decode, float *y);

/* The dot of n elements of Q3_K..Q6_K with Q8_K as ggml's generic dots sum it: per block, element
 * e's integer product scale * (q8[e] * q[e]) into lane e % 8, then acc[1 + l] += (d * yd) * lane
 * l; where has_min, also acc[0] -= (dmin * yd) * sum(bsums * min) block by block. */
int bq_kq_dot_q8_K(const void *x, size_t block_bytes, bq_kq_decode *decode, const void *y, size_t n,
                   float *acc);

/* Kernel prototypes (helper R will generate these from kernels.inc). Each returns BQ_OK, or
 * BQ_EINVAL and writes nothing when n is not a multiple of 256. Dots <t>.q8_K keep ggml's running
 * state in acc[0..8] (acc[0] = ggml's sumf, acc[1..8] its eight lane sums where it has them), so a
 * left-to-right sum of the zero-initialized 16-float acc gives ggml's result; dots <t>.f32 add into
 * acc[0]. */
BQ_REF_ROW_PROTOS(q2_K)
BQ_REF_ROW_PROTOS(q3_K)
BQ_REF_ROW_PROTOS(q4_K)
BQ_REF_ROW_PROTOS(q5_K)
BQ_REF_ROW_PROTOS(q6_K)
BQ_REF_ROW_PROTOS(q8_K)
BQ_DOT_PROTO(q2_K, q8_K, __ref);
BQ_DOT_PROTO(q3_K, q8_K, __ref);
BQ_DOT_PROTO(q4_K, q8_K, __ref);
BQ_DOT_PROTO(q5_K, q8_K, __ref);
BQ_DOT_PROTO(q6_K, q8_K, __ref);

#endif
