/* The IQ4_NL, IQ4_XS, IQ3_XXS and IQ3_S reference quantizers (src/imat/) built with
 * AddressSanitizer and UndefinedBehaviorSanitizer: the IQ3 search tables against a brute-force
 * construction from their definition (every point's distances sorted by (distance, index), the
 * nearest 2 or 3 distances kept), built twice alike; then every quantizer on edge rows (zeros,
 * constants, tiny, subnormal, huge, near FLT_MAX, NaN, Inf, ties, a NaN among zeros) without and
 * with importance weights of several kinds, which must run clean and return BQ_OK (IQ3: or
 * BQ_EDOMAIN, where ggml aborts); rows quantized together equal rows quantized one by one; the
 * plain IQ4 kernels equal quantize_rows without weights; BQ_EINVAL and BQ_ENOTABLES. The bytes
 * themselves are compared with ggml in tests/imat-iq43.test.js. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/imat/iq3.h"
#include "rows_check.h"

/* ---- The IQ3 tables from their definition ---- */

static int cmp_pair(const void *a, const void *b) {
  const int *p = a, *q = b;
  return p[0] != q[0] ? (p[0] > q[0]) - (p[0] < q[0]) : (p[1] > q[1]) - (p[1] < q[1]);
}

static void *tables_by_definition(int type, int G) {
  const size_t bytes = bq_quant_tables_bytes(type);
  CHECK(bytes == (size_t)BQ_IQ3_TABLE_BYTES(G), "%d: %zu table bytes", type, bytes);
  uint8_t *mem = aligned_alloc(64, bytes), *again = aligned_alloc(64, bytes);
  CHECK(bq_quant_tables_init(type, again) == BQ_OK, "build");
  CHECK(bq_quant_tables_init(type, mem) == BQ_OK, "build again");
  CHECK(!memcmp(mem, again, bytes), "%d: two builds differ", type);
  bq_iq3_tables t;
  CHECK(bq_iq3_tables_of(G, &t) && t.grid == (const uint32_t *)mem, "the tables in use");
  const int nwant = G == 256 ? 2 : 3;
  int pairs[512][2], on = 0, bad = 0;
  size_t end = 0;
  for (int u = 0; u < 4096; u++) {
    int c[4];
    for (int i = 0; i < 4; i++) c[i] = 2 * (u >> 3 * i & 7) + 1;
    int on_grid = -1;
    for (int k = 0; k < G; k++) {
      int d2 = 0;
      for (int i = 0; i < 4; i++) {
        const int d = (int)(t.grid[k] >> 8 * i & 0xFF) - c[i];
        d2 += d * d;
      }
      pairs[k][0] = d2, pairs[k][1] = k;
      if (d2 == 0) on_grid = k;
    }
    if (on_grid >= 0) {
      on++;
      bad += t.map[u] != on_grid;
      continue;
    }
    qsort(pairs, (size_t)G, sizeof pairs[0], cmp_pair);
    const uint16_t *nb = t.neighbours - t.map[u] - 1;
    /* the entries of the first nwant distinct distances */
    int n = 0, have = 0;
    for (; n < G; n++)
      if (n == 0 || pairs[n][0] != pairs[n - 1][0]) {
        if (have == nwant) break;
        have++;
      }
    bad += t.map[u] >= 0 || nb[0] != n;
    for (int j = 0; j < n && j < nb[0]; j++) bad += nb[1 + j] != pairs[j][1];
    const size_t e = (size_t)(nb - t.neighbours) + 1 + nb[0];
    end = e > end ? e : end;
  }
  CHECK(on == G, "%d: %d grid points in the map", type, on);
  CHECK(bad == 0, "%d: %d map entries or neighbour lists differ from the definition", type, bad);
  CHECK(end == (G == 256 ? BQ_IQ3XXS_NEIGHBOURS : BQ_IQ3S_NEIGHBOURS), "%d: %zu list entries", type,
        end);
  free(again);
  return mem; /* in use by the quantizers until dropped */
}

/* ---- The quantizers on edge rows ---- */

enum { COLS = 512, KINDS = 14, ROWS = KINDS };

static void edge_rows(float *x) {
  for (int r = 0; r < ROWS; r++)
    for (int e = 0; e < COLS; e++) {
      const float g = (float)((e * 37 + r * 11) % 61 - 30) * 0.125f;
      float v;
      switch (r) {
        case 0:
          v = 0.0f;
          break;
        case 1:
          v = e % 3 ? 1.5f : -2.25f;
          break;
        case 2:
          v = g * 1e-9f;
          break;
        case 3:
          v = g * 1e-40f;
          break;
        case 4:
          v = g * 1e6f;
          break;
        case 5:
          v = e & 1 ? 3e38f : -3.3e38f;
          break;
        case 6:
          v = e == 77 ? NAN : g;
          break;
        case 7:
          v = e % 5 == 0 ? nanp(0x7FC00001u + (uint32_t)e) : g;
          break;
        case 8:
          v = e == 200 ? INFINITY : g;
          break;
        case 9:
          v = e % 64 == 0 ? -INFINITY : g;
          break;
        case 10:
          v = (float)(e % 8 - 4) * 0.5f;
          break;
        case 11:
          v = e % 32 == 0 ? nanp(0x7FC00002u) : e % 32 < 4 ? 0.0f : g;
          break;
        case 12:
          v = (e >> 5) % 3 == 1 ? 0.0f : g;
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
    quant_fn plain;
    size_t bs, ts;
    int grid;
  } q[] = {
      {"iq4_nl", bq_iq4_nl_quantize_rows__ref, bq_iq4_nl_quantize__ref, 32, 18, 0},
      {"iq4_xs", bq_iq4_xs_quantize_rows__ref, bq_iq4_xs_quantize__ref, 256, 136, 0},
      {"iq3_xxs", bq_iq3_xxs_quantize_rows__ref, NULL, 256, 98, 1},
      {"iq3_s", bq_iq3_s_quantize_rows__ref, NULL, 256, 110, 1},
  };
  float *x = malloc(sizeof(float) * ROWS * COLS), w[COLS];
  edge_rows(x);
  for (size_t t = 0; t < sizeof q / sizeof *q; t++) {
    const size_t rb = COLS / q[t].bs * q[t].ts;
    uint8_t *all = malloc(rb * ROWS), *one = malloc(rb);
    for (int kind = -1; kind < 6; kind++) {
      if (kind >= 0) weights_of_kind(kind, w, COLS);
      const float *qw = kind >= 0 ? w : NULL;
      int status[ROWS];
      const int aborted =
          check_rows(q[t].name, q[t].rows, x, ROWS, COLS, rb, qw, q[t].grid, all, status);
      if (kind < 0 && q[t].plain && !aborted) {
        uint8_t *both = malloc(rb * ROWS);
        CHECK(q[t].plain(x, both, ROWS * COLS) == BQ_OK, "%s plain", q[t].name);
        CHECK(!memcmp(both, all, rb * ROWS), "%s: plain differs from rows", q[t].name);
        free(both);
      }
      /* rows of moderate values quantize with moderate weights (huge weights can overflow the
       * IQ3 search's distances, and ggml aborts) */
      for (int r = 0; r <= 4 && kind <= 2; r++)
        CHECK(status[r] == BQ_OK, "%s row %d quantizes", q[t].name, r);
    }
    memset(one, 0x5A, rb);
    CHECK(q[t].rows(x, one, 1, q[t].bs + q[t].bs / 2, NULL) == BQ_EINVAL, "%s: bad cols",
          q[t].name);
    CHECK(one[0] == 0x5A && one[rb - 1] == 0x5A, "%s: nothing written", q[t].name);
    free(all), free(one);
  }
  free(x);
}

static void no_tables(void) {
  float x[256] = {1};
  uint8_t y[110];
  bq_quant_tables_drop(BQ_TYPE_IQ3_XXS);
  bq_quant_tables_drop(BQ_TYPE_IQ3_S);
  CHECK(!bq_quant_tables_ready(BQ_TYPE_IQ3_XXS) && !bq_quant_tables_ready(BQ_TYPE_IQ3_S),
        "dropped");
  CHECK(bq_iq3_xxs_quantize_rows__ref(x, y, 1, 256, NULL) == BQ_ENOTABLES, "iq3_xxs: no tables");
  CHECK(bq_iq3_s_quantize_rows__ref(x, y, 1, 256, NULL) == BQ_ENOTABLES, "iq3_s: no tables");
  CHECK(bq_iq3_s_quantize_rows__ref(x, y, 1, 100, NULL) == BQ_EINVAL, "iq3_s: cols first");
  uint8_t *odd = malloc(bq_quant_tables_bytes(BQ_TYPE_IQ3_S) + 64);
  CHECK(bq_quant_tables_init(BQ_TYPE_IQ3_S, odd + ((uintptr_t)odd % 64 ? 0 : 8)) == BQ_EINVAL,
        "unaligned memory refused");
  free(odd);
}

int main(void) {
  void *xxs = tables_by_definition(BQ_TYPE_IQ3_XXS, 256);
  void *s = tables_by_definition(BQ_TYPE_IQ3_S, 512);
  quantizers();
  no_tables();
  free(xxs), free(s);
  return check_report("native IQ4/IQ3 quantizers");
}
