/* The quantizers with importance weights (ggml's quantize_<type> with quant_weights): what their
 * files share. Each src/imat/<type>.c defines bq_<type>_quantize_rows__ref (kernels.inc lists it),
 * which quantizes rows of cols values exactly as ggml_quantize_chunk(type, x, y, 0, rows, cols, qw)
 * does, with qw one weight per column or NULL (ggml's unweighted path, which for most types is
 * quantize_row_<type>_ref). Plain C in ggml's float order, built with -ffp-contract=off. */
#ifndef BQ_IMAT_H
#define BQ_IMAT_H

#include "../internal.h"

/* One family of grid search tables (src/imat/tables.c finds a type's): its size in bytes, how to
 * build it into 64-byte aligned memory of that size (BQ_OK or BQ_EINVAL), and the pointer its
 * quantizers read (NULL while not built). */
typedef struct {
  size_t bytes;
  int (*build)(void *mem);
  void **tables;
} bq_tables_family;

#endif
