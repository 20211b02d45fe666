/* The IQ1_S and IQ1_M reference quantizers (src/imat/iq1.c) built with AddressSanitizer and
 * UndefinedBehaviorSanitizer. First their sort against glibc's qsort itself, the sort ggml calls,
 * with ggml's value-only comparator on (value, index) pairs: the same order on ties, on +0 and -0
 * and on NaNs (which compare equal to everything, so only the same merge steps give the same
 * order), for the 16 and 32 values of a sub-block. Then both quantizers on edge rows (zeros,
 * constants, tiny, subnormal, huge, near FLT_MAX, NaN, Inf, ties) without and with importance
 * weights of several kinds: they must run clean and return BQ_OK or BQ_EDOMAIN (where ggml
 * aborts), rows quantized together equal rows quantized one by one, moderate rows quantize; and
 * BQ_EINVAL (IQ1_S without weights too) and BQ_ENOTABLES. The bytes themselves are compared with
 * ggml in tests/imat-iq1.test.js. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/imat/iq1.h"
#include "rows_check.h"

/* ---- the sort ---- */

static int ggml_cmp(const void *a, const void *b) {
  const float l = *(const float *)a, r = *(const float *)b;
  return l < r ? -1 : l > r ? 1 : 0;
}

static void sorts(void) {
  uint32_t s = 12345;
  for (int trial = 0; trial < 20000; trial++) {
    const int n = trial % 2 ? BQ_IQ1S_BLOCK : BQ_IQ1M_BLOCK, kind = trial % 7;
    float x[BQ_IQ1S_BLOCK];
    for (int j = 0; j < n; j++) {
      s = s * 1664525u + 1013904223u;
      const int r = (int)(s >> 24);
      x[j] = kind == 0   ? (float)(r % 5) - 2       /* many ties */
             : kind == 1 ? (r % 3 ? 0.0f : -0.0f)   /* +0 and -0 */
             : kind == 2 ? (r % 4 ? (float)r : NAN) /* some NaNs */
             : kind == 3 ? (r % 2 ? nanp(0xFFC00000u) : (float)(r % 3))
             : kind == 4 ? (r % 9 ? (float)(r % 4) : (r % 2 ? INFINITY : -INFINITY))
             : kind == 5 ? 1.0f          /* all equal */
                         : (float)r / 7; /* distinct */
    }
    struct {
      float v;
      int i;
    } p[BQ_IQ1S_BLOCK];
    for (int j = 0; j < n; j++) p[j].v = x[j], p[j].i = j;
    qsort(p, (size_t)n, sizeof *p, ggml_cmp);
    int perm[BQ_IQ1S_BLOCK];
    bq_iq1_sort(x, n, perm);
    int same = 1;
    for (int j = 0; j < n; j++) same &= perm[j] == p[j].i;
    CHECK(same, "sort of %d values, kind %d (trial %d): not glibc's order", n, kind, trial);
  }
}

/* ---- the quantizers ---- */

enum { ROWS = 14, COLS = 512 };

static void edge_rows(float *x) {
  uint32_t s = 777;
  for (int r = 0; r < ROWS; r++)
    for (int e = 0; e < COLS; e++) {
      s = s * 1664525u + 1013904223u;
      const float g = ((float)(s >> 8) / 16777216.0f - 0.5f) * 4;
      float v;
      switch (r) {
        case 0:
          v = g;
          break;
        case 1:
          v = g * (e % 37 == 5 ? 40 : 1);
          break;
        case 2:
          v = 0.625f;
          break;
        case 3:
          v = (float)(e % 8 - 4) * 0.5f;
          break;
        case 4:
          v = e % 3 ? 0.0f : -0.0f;
          break;
        case 5:
          v = g * 1e-9f;
          break;
        case 6:
          v = g * 1e-40f;
          break;
        case 7:
          v = g * 1e6f;
          break;
        case 8:
          v = (e % 2 ? -1 : 1) * 3.4e38f * (g + 2) / 4;
          break;
        case 9:
          v = e == 7 ? NAN : g;
          break;
        case 10:
          v = e % 5 == 0 ? nanp(0x7FC00001u + (uint32_t)e) : g;
          break;
        case 11:
          v = e == 3 ? INFINITY : g;
          break;
        case 12:
          v = e % 2 ? INFINITY : -INFINITY;
          break;
        default:
          v = nanp(0x7FC00001u);
          break;
      }
      x[r * COLS + e] = v;
    }
}

static void quantizers(void) {
  static const struct {
    const char *name;
    rows_fn rows;
    size_t ts;
  } q[] = {
      {"iq1_s", bq_iq1_s_quantize_rows__ref, sizeof(block_iq1_s)},
      {"iq1_m", bq_iq1_m_quantize_rows__ref, sizeof(block_iq1_m)},
  };
  float *x = malloc(sizeof(float) * ROWS * COLS), w[COLS];
  edge_rows(x);
  for (size_t t = 0; t < sizeof q / sizeof *q; t++) {
    const size_t rb = COLS / QK_K * q[t].ts;
    uint8_t *all = malloc(rb * ROWS), *one = malloc(rb);
    for (int kind = t == 0 ? 0 : -1; kind < 6; kind++) {
      if (kind >= 0) weights_of_kind(kind, w, COLS);
      int status[ROWS];
      check_rows(q[t].name, q[t].rows, x, ROWS, COLS, rb, kind >= 0 ? w : NULL, 1, all, status);
      /* moderate rows quantize with moderate weights */
      for (int r = 0; r <= 4 && kind <= 2; r++)
        CHECK(status[r] == BQ_OK, "%s row %d, weights %d, quantizes", q[t].name, r, kind);
    }
    memset(one, 0x5A, rb);
    CHECK(q[t].rows(x, one, 1, QK_K + QK_K / 2, w) == BQ_EINVAL, "%s: bad cols", q[t].name);
    CHECK(one[0] == 0x5A && one[rb - 1] == 0x5A, "%s: nothing written", q[t].name);
    free(all), free(one);
  }
  uint8_t y[sizeof(block_iq1_s)];
  memset(y, 0x5A, sizeof y);
  CHECK(bq_iq1_s_quantize_rows__ref(x, y, 1, QK_K, NULL) == BQ_EINVAL, "iq1_s: weights needed");
  CHECK(y[0] == 0x5A && y[sizeof y - 1] == 0x5A, "iq1_s without weights: nothing written");
  free(x);
}

static void no_tables(void) {
  float x[QK_K] = {1}, w[QK_K] = {1};
  uint8_t y[sizeof(block_iq1_m)];
  bq_quant_tables_drop(BQ_TYPE_IQ1_S);
  CHECK(!bq_quant_tables_ready(BQ_TYPE_IQ1_S) && !bq_quant_tables_ready(BQ_TYPE_IQ1_M), "dropped");
  CHECK(bq_iq1_s_quantize_rows__ref(x, y, 1, QK_K, w) == BQ_ENOTABLES, "iq1_s: no tables");
  CHECK(bq_iq1_m_quantize_rows__ref(x, y, 1, QK_K, NULL) == BQ_ENOTABLES, "iq1_m: no tables");
  CHECK(bq_iq1_m_quantize_rows__ref(x, y, 1, 100, NULL) == BQ_EINVAL, "iq1_m: cols first");
}

int main(void) {
  sorts();
  const size_t bytes = bq_quant_tables_bytes(BQ_TYPE_IQ1_M);
  void *mem = aligned_alloc(64, bytes);
  CHECK(bq_quant_tables_init(BQ_TYPE_IQ1_M, mem) == BQ_OK, "tables");
  CHECK(bq_quant_tables_ready(BQ_TYPE_IQ1_S), "shared with IQ1_S");
  quantizers();
  no_tables();
  free(mem);
  return check_report("native IQ1 quantizers");
}
