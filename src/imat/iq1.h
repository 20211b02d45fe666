/* IQ1_S and IQ1_M quantizers (ggml's quantize_iq1_s and quantize_iq1_m): what their reference
 * (iq1.c) and SIMD128 version (simd128/iq1.c) share. Both search the 2048-point grid of
 * iq2xs_init_impl (iq2_tables.c builds it; IQ1_S and IQ1_M share one copy). */
#ifndef BQ_IMAT_IQ1_H
#define BQ_IMAT_IQ1_H

#include "iq2.h"

/* The grid both search (bq_iq2_tables_of(BQ_IQ1_GRID, ...)): grid[k]'s byte j is 2 L_j + 1, L_j in
 * 0..2 the code of element j. */
enum { BQ_IQ1_GRID = 2048 };

/* Sub-block sizes: IQ1_S has 8 sub-blocks of 32 per super-block, IQ1_M 16 of 16, each in groups
 * of 8 that share a grid index. */
enum { BQ_IQ1S_BLOCK = 32, BQ_IQ1M_BLOCK = 16 };

/* The three values a code 0..2 stands for, with the delta added (x_p) or subtracted (x_m):
 * -1 +- 1/8, +-1/8, 1 +- 1/8. */
extern const float bq_iq1_xp[3], bq_iq1_xm[3];

/* iq1_find_best_neighbour2 for the off-grid point u: the grid point of u's neighbour list nearest
 * the 8 values xval at scale s, by sum w (s xg[L] - xval)^2 in element order (ties: the first in
 * the list); its codes into L and its index returned, or -1 when no distance is below FLT_MAX.
 * ggml then searches the whole grid, but that loop reads xval[i] with i the grid index (past the
 * group, into whatever memory follows), so it cannot be reproduced; where we could make it run
 * it found nothing either and ggml aborted, so -1 stands for that abort. */
typedef int bq_iq1_search_fn(const bq_iq2_tables *t, int u, const float *xval, const float *w,
                             float s, const float *xg, int8_t *L);
int bq_iq1_search__ref(const bq_iq2_tables *t, int u, const float *xval, const float *w, float s,
                       const float *xg, int8_t *L);

/* The order ggml's qsort puts the values of a sub-block in: perm[j] is the index of the j-th
 * smallest. glibc sorts these small arrays with a top-down merge sort that takes the left run on
 * equal keys; this is that merge sort, step for step, so ties (and NaNs, which compare equal to
 * everything) fall exactly as there. */
void bq_iq1_sort(const float *x, int n, int *perm);

/* IQ1_S's split search from the running sums over the sorted values, sumx[j] = sum of w x and
 * sumw[j] = sum of w over the j smallest (33 each; SIMD128 reads 3 more, which must be 0): for
 * each pair of boundaries i1 <= i2 and each shift (+1: codes -1, 0, 1 plus 1/8; -1: minus), the
 * weighted least-squares scale; the best into *i1, *i2, *shift and *scale (untouched when none is
 * better than -FLT_MAX). */
typedef void bq_iq1s_split_fn(const float *sumx, const float *sumw, int *besti1, int *besti2,
                              int *shift, float *scale);
void bq_iq1s_split__ref(const float *sumx, const float *sumw, int *besti1, int *besti2, int *shift,
                        float *scale);

/* IQ1_M's split search over the sorted values: for each pair of boundaries i1 <= i2 in the sorted
 * order (codes 0 below i1, 1 below i2, 2 above) and each of the 4 choices of delta sign for the two
 * groups of 8 (k = 0: +,+; 1: +,-; 2: -,+; 3: -,-), the weighted least-squares scale; the best
 * into *i1, *i2, *k and *scale (untouched when none is better than -FLT_MAX). */
typedef void bq_iq1m_split_fn(const float *xb, const float *w, const int *perm, int *besti1,
                              int *besti2, int *bestk, float *scale);
void bq_iq1m_split__ref(const float *xb, const float *w, const int *perm, int *besti1, int *besti2,
                        int *bestk, float *scale);

/* The steps one version of the quantizers supplies (the reference's, or SIMD128's). */
typedef struct {
  bq_iq1_search_fn *search;
  bq_iq1s_split_fn *split_s;
  bq_iq1m_split_fn *split_m;
} bq_iq1_kernels;

/* The quantize_rows kernels on top of those steps. IQ1_S needs weights (ggml asserts them):
 * qw NULL is BQ_EINVAL, nothing written. */
int bq_iq1_s_rows(const bq_iq1_kernels *k, const float *x, void *y, size_t rows, size_t cols,
                  const float *qw);
int bq_iq1_m_rows(const bq_iq1_kernels *k, const float *x, void *y, size_t rows, size_t cols,
                  const float *qw);

#endif
