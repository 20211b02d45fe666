/* The quantizers with importance weights (ggml's quantize_<type> with quant_weights): what their
 * files share. Each src/imat/<type>.c defines bq_<type>_quantize_rows__ref (kernels.inc lists it),
 * which quantizes rows of cols values exactly as ggml_quantize_chunk(type, x, y, 0, rows, cols, qw)
 * does, with qw one weight per column or NULL (ggml's unweighted path, which for most types is
 * quantize_row_<type>_ref). Plain C in ggml's float order, built with -ffp-contract=off; where a
 * NaN can reach the bytes, arithmetic goes through fp.h, so that NaN inputs give ggml's bytes. */
#ifndef BQ_IMAT_H
#define BQ_IMAT_H

#include "../internal.h"
#include "../iquants.h"
#include "../iquants4.h"
#include "../kquants.h"

/* One family of grid search tables (src/imat/tables.c finds a type's): its size in bytes, how to
 * build it into 64-byte aligned memory of that size (BQ_OK or BQ_EINVAL), and the pointer its
 * quantizers read (NULL while not built). */
typedef struct {
  size_t bytes;
  int (*build)(void *mem);
  void **tables;
} bq_tables_family;

/* The shared steps of the weighted quantizers (src/imat/search.c). */

/* x[0]*x[0] + x[1]*x[1] + ... in order, from 0 (ggml's sum_x2 of a row or super-block). Where
 * two NaNs meet, the one ggml's compiled loop keeps: the sum's for elements 4k and 4k+3, the
 * square's for 4k+1 and 4k+2 (gcc adds four squares at a time, in order, from a vector). */
float bq_imat_sum_x2(const float *x, size_t n);

/* w[0] + w[1] + ... in order, from 0 (a sub-block's total weight). */
float bq_imat_sum(const float *w, int n);

/* The weights of n values: w[i] = qw[i] * sqrt(sigma2 + x[i]*x[i]) (a NaN square wins over a NaN
 * sigma2, as in ggml's compiled code). */
void bq_imat_weights(const float *qw, const float *x, int n, float sigma2, float *w);

/* ggml's make_qp_quants: the codes L (uint8, 0..nmax after the search; stored mod 256 as ggml does
 * where a NaN or a negative value makes them out of range) of the n non-negative values x (the
 * K-quants' sub-block scales or mins) under one scale, weighted by qw, which it returns. All x
 * below 1e-15: L = 0, returns 0. */
float bq_make_qp_quants(int n, int nmax, const float *x, uint8_t *L, const float *qw);

/* The grid types' shared steps (IQ2_*, IQ3_*): sumqx = sum w v (2L + 1) and sumq2 = sum w (2L +
 * 1)^2 over n values, in element order (a trial scale's fit). */
void bq_imat_grid_sums(int n, const float *w, const float *v, const int8_t *L, float *sumqx,
                       float *sumq2);

/* The magnitudes v[0..7] of 8 values x and their sign bits (bit i: x[i] is not >= 0). With even
 * (grids whose sign byte holds 7 bits: IQ2_XXS, IQ2_XS, IQ3_XXS), an odd count of negative values
 * flips the one of least w x^2 (the first on a tie) back to negative, v and bit alike, and the
 * top bit is dropped. Returns the sign byte. */
uint8_t bq_imat_signs8(const float *x, const float *w, float *v, int even);

/* ggml's search constants of the weighted affine fits (make_qkx3_quants: Q4_1, Q5_1, Q2_K, Q4_K,
 * Q5_K): 37 trial scales (nmax - 0.9 + 0.05 * is) / (max - min), is = 0..36. */
#define BQ_IMAT_RMIN (-0.9f)
#define BQ_IMAT_RDELTA 0.05f
#define BQ_IMAT_NSTEP 36

/* The per-block steps the row kernels share between the reference and the SIMD128 versions: one
 * block of the 32-element types given its row's sigma2 (the mean of x^2 over the row), one
 * super-block of the K-quants (their sigma2 is the super-block's), each with the qw of its
 * columns, written to out (any alignment). The SIMD128 kernels fall back to these where a NaN
 * could make their bytes differ from ggml's. */
void bq_q4_0_imat_block__ref(const float *x, const float *qw, float sigma2, void *out);
void bq_q4_1_imat_block__ref(const float *x, const float *qw, float sigma2, void *out);
void bq_q5_0_imat_block__ref(const float *x, const float *qw, float sigma2, void *out);
void bq_q5_1_imat_block__ref(const float *x, const float *qw, float sigma2, void *out);
void bq_q2_K_imat_block__ref(const float *x, const float *qw, void *out);
void bq_q3_K_imat_block__ref(const float *x, const float *qw, void *out);
void bq_q4_K_imat_block__ref(const float *x, const float *qw, void *out);
void bq_q5_K_imat_block__ref(const float *x, const float *qw, void *out);
void bq_q6_K_imat_block__ref(const float *x, const float *qw, void *out);

/* The K-quants' weighted scale steps (the SIMD128 kernels share them): Q2_K's 16 scales and mins
 * as 4-bit codes by make_qp_quants (nmax 15) weighted by the sub-blocks' total weights sw, and d,
 * dmin; Q3_K's 16 scales as 6-bit values by make_qx_quants (nmax 32) weighted by sw, and d. */
void bq_q2_K_imat_scales(const float *scales, const float *mins, const float *sw, block_q2_K *b);
void bq_q3_K_imat_scales(const float *scales, const float *sw, block_q3_K *b);

/* A row's sigma2 as ggml's quantize_row_<t>_impl of Q4_0..Q5_1 computes it: sum_x2 / cols. */
static inline float bq_imat_row_sigma2(const float *x, size_t cols) {
  return bq_div(bq_imat_sum_x2(x, cols), (float)cols);
}

/* The row loop of a weighted quantizer of 32-element blocks (blocks of `bytes` bytes), given its
 * per-block step; and of a K-quant, given its per-super-block step. cols is a multiple of the
 * block size and qw is not NULL. */
typedef void bq_imat_block32(const float *x, const float *qw, float sigma2, void *out);
typedef void bq_imat_block256(const float *x, const float *qw, void *out);
void bq_imat_rows32(const float *x, void *y, size_t rows, size_t cols, const float *qw,
                    size_t bytes, bq_imat_block32 *block);
void bq_imat_rows256(const float *x, void *y, size_t rows, size_t cols, const float *qw,
                     size_t bytes, bq_imat_block256 *block);

/* A quantize_rows kernel's checks and ggml's dispatch: BQ_EINVAL (nothing written) when cols is
 * not a multiple of the block size bs; without weights, the type's quantize kernel `plain` over
 * all rows at once (ggml's quantize_row_<t>_ref); else `weighted`. */
#define BQ_IMAT_ROWS(bs, plain, weighted)     \
  do {                                        \
    if (cols % (bs)) return BQ_EINVAL;        \
    if (!qw) return plain(x, y, rows * cols); \
    weighted;                                 \
    return BQ_OK;                             \
  } while (0)

/* ---- IQ4_NL and IQ4_XS (iq4.c): the steps of quantize_row_iq4_nl_impl ---- */

/* Twice the mean square of n values, sum x^2 in order times 2 / n (ggml's sigma2). */
float bq_iq4_sigma2(const float *x, int n);
/* The weights of 32 values: qw_j * sqrt(sigma2 + x_j^2), or x_j^2 when qw is NULL. */
void bq_iq4_weights(const float *x, const float *qw, float sigma2, float *w);
/* The value of largest magnitude of 32 (the first on a tie; NaN skipped) into *max; 0 when that
 * magnitude is below 1e-15 (the sub-block is empty and its scale 0), else 1. */
int bq_iq4_max(const float *x, float *max);
/* The fitted scale of 32 values with weights w: the start and 15 trial scales (the file's
 * comment), in ggml's float order and with its NaN bits. */
float bq_iq4_fit__ref(const float *x, const float *w);
/* The 16 bytes of 32 codes 0..15: element j in the low nibble of qs[j % 16] for j < 16, else the
 * high nibble. */
void bq_iq4_pack(const uint8_t *L, uint8_t *qs);
/* The packed codes (bq_iq4_pack) of 32 values x * id, each the nearest table entry. */
typedef void bq_iq4_codes_fn(const float *x, float id, uint8_t *qs);
void bq_iq4_codes__ref(const float *x, float id, uint8_t *qs);
/* The steps of one version of the quantizers (the reference's, or SIMD128's), and the rows of
 * IQ4_NL and IQ4_XS quantized with them (the quantize_rows kernels). */
typedef struct {
  void (*weights)(const float *x, const float *qw, float sigma2, float *w);
  float (*fit)(const float *x, const float *w);
  bq_iq4_codes_fn *codes;
} bq_iq4_kernels;
int bq_iq4_nl_rows(const bq_iq4_kernels *k, const float *x, void *y, size_t rows, size_t cols,
                   const float *qw);
int bq_iq4_xs_rows(const bq_iq4_kernels *k, const float *x, void *y, size_t rows, size_t cols,
                   const float *qw);

#endif
