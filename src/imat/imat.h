/* The quantizers with importance weights (ggml's quantize_<type> with quant_weights): what their
 * files share. Each src/imat/<type>.c defines bq_<type>_quantize_rows__ref (kernels.inc lists it),
 * which quantizes rows of cols values exactly as ggml_quantize_chunk(type, x, y, 0, rows, cols, qw)
 * does, with qw one weight per column or NULL (ggml's unweighted path, which for most types is
 * quantize_row_<type>_ref). Plain C in ggml's float order, built with -ffp-contract=off. */
#ifndef BQ_IMAT_H
#define BQ_IMAT_H

#include "../iquants.h"
#include "../iquants4.h"

/* One family of grid search tables (src/imat/tables.c finds a type's): its size in bytes, how to
 * build it into 64-byte aligned memory of that size (BQ_OK or BQ_EINVAL), and the pointer its
 * quantizers read (NULL while not built). */
typedef struct {
  size_t bytes;
  int (*build)(void *mem);
  void **tables;
} bq_tables_family;

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
