/* What the native tests of the quantizers with importance weights share: a NaN of given bits,
 * the kinds of weights every quantizer is tried with, and the check of a rows quantizer on a set
 * of edge rows (each row alone, then all rows in one call: the same bytes, or the abort of any). */
#ifndef BQ_ROWS_CHECK_H
#define BQ_ROWS_CHECK_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/bq.h"
#include "check.h"

static inline float nanp(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Importance weights of kind 0..5: ones, moderate, moderate with zeros, all zero, tiny, huge. */
static inline void weights_of_kind(int kind, float *w, int cols) {
  for (int e = 0; e < cols; e++) {
    const float u = (float)((e * 7919) % 1000) / 1000.0f;
    w[e] = kind == 0   ? 1.0f
           : kind == 1 ? u * 10
           : kind == 2 ? (e % 7 ? u : 0.0f)
           : kind == 3 ? 0.0f
           : kind == 4 ? u * 1e-30f
                       : u * 1e30f;
  }
}

typedef int (*rows_fn)(const float *, void *, size_t, size_t, const float *);

/* Quantizes each of the rows of x alone (status[r]: BQ_OK, or BQ_EDOMAIN where may_abort: a row
 * ggml aborts on), keeping the bytes of those that quantize in all (rows * rb bytes), then all
 * rows in one call: BQ_EDOMAIN if any row aborted, else the same bytes. Returns whether any row
 * aborted. */
static inline int check_rows(const char *name, rows_fn fn, const float *x, int rows, int cols,
                             size_t rb, const float *w, int may_abort, uint8_t *all, int *status) {
  uint8_t *one = malloc(rb), *both = malloc(rb * (size_t)rows);
  int aborted = 0;
  for (int r = 0; r < rows; r++) {
    status[r] = fn(x + (size_t)r * cols, one, 1, (size_t)cols, w);
    CHECK(status[r] == BQ_OK || (may_abort && status[r] == BQ_EDOMAIN), "%s row %d: %d", name, r,
          status[r]);
    aborted |= status[r] != BQ_OK;
    if (status[r] == BQ_OK) memcpy(all + (size_t)r * rb, one, rb);
  }
  const int s = fn(x, both, (size_t)rows, (size_t)cols, w);
  CHECK(s == (aborted ? BQ_EDOMAIN : BQ_OK), "%s all rows: %d", name, s);
  if (s == BQ_OK) CHECK(!memcmp(both, all, rb * (size_t)rows), "%s: rows together differ", name);
  free(one), free(both);
  return aborted;
}

#endif
