/* The IQ2_XXS, IQ2_XS and IQ2_S reference quantizers and the iq2 search tables (src/imat/iq2*.c)
 * built with AddressSanitizer and UndefinedBehaviorSanitizer: the tables of all four grids built
 * twice alike, each list within the table and pointing at grid points; then every quantizer on
 * edge rows (zeros, constants, tiny, subnormal, huge, near FLT_MAX, NaN, Inf, ties, a NaN among
 * zeros) with importance weights of several kinds (and IQ2_S without), which must run clean and
 * return BQ_OK or BQ_EDOMAIN (where ggml aborts); rows quantized together equal rows quantized one
 * by one; BQ_EINVAL and BQ_ENOTABLES. The bytes themselves are compared with ggml in
 * tests/imat-iq2.test.js. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/imat/iq2.h"
#include "rows_check.h"

static void *tables(int type, int G) {
  const size_t bytes = bq_quant_tables_bytes(type);
  CHECK(bytes == (size_t)BQ_IQ2_TABLE_BYTES(G), "%d: %zu table bytes", type, bytes);
  uint8_t *mem = aligned_alloc(64, bytes), *again = aligned_alloc(64, bytes);
  CHECK(bq_quant_tables_init(type, again) == BQ_OK, "build");
  CHECK(bq_quant_tables_init(type, mem) == BQ_OK, "build again");
  CHECK(!memcmp(mem, again, 8 * (size_t)G + 4 * BQ_IQ2_MAP + 2 * (size_t)BQ_IQ2_NEIGHBOURS(G)),
        "%d: two builds differ", type);
  bq_iq2_tables t;
  CHECK(bq_iq2_tables_of(G, &t) && t.grid == (const uint64_t *)mem, "the tables in use");
  int on = 0, bad = 0;
  for (int u = 0; u < BQ_IQ2_MAP; u++) {
    if (t.map[u] >= 0) {
      on++;
      continue;
    }
    const size_t o = (size_t)(-t.map[u] - 1);
    const uint16_t *nb = t.neighbours + o;
    bad += o + 1 + nb[0] > (size_t)BQ_IQ2_NEIGHBOURS(G) || nb[0] == 0;
    for (int j = 1; j <= nb[0] && !bad; j++) bad += nb[j] >= G;
  }
  CHECK(on == G && bad == 0, "%d: %d grid points mapped, %d bad lists", type, on, bad);
  free(again);
  return mem; /* in use by the quantizers until dropped */
}

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
          v = e & 1 ? 3e38f : -3.3e38f * (float)(e % 7) / 7;
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
          v = (e >> 4) % 3 == 1 ? 0.0f : g;
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
    int plain;
  } q[] = {
      {"iq2_xxs", bq_iq2_xxs_quantize_rows__ref, 66, 0},
      {"iq2_xs", bq_iq2_xs_quantize_rows__ref, 74, 0},
      {"iq2_s", bq_iq2_s_quantize_rows__ref, 82, 1},
  };
  float *x = malloc(sizeof(float) * ROWS * COLS), w[COLS];
  edge_rows(x);
  for (size_t t = 0; t < sizeof q / sizeof *q; t++) {
    const size_t rb = COLS / 256 * q[t].ts;
    uint8_t *all = malloc(rb * ROWS), *one = malloc(rb);
    for (int kind = q[t].plain ? -1 : 0; kind < 6; kind++) {
      if (kind >= 0) weights_of_kind(kind, w, COLS);
      int status[ROWS];
      check_rows(q[t].name, q[t].rows, x, ROWS, COLS, rb, kind >= 0 ? w : NULL, 1, all, status);
      /* rows of moderate values quantize with moderate weights */
      for (int r = 0; r <= 4 && kind <= 2; r++)
        CHECK(status[r] == BQ_OK, "%s row %d quantizes (weights %d)", q[t].name, r, kind);
    }
    memset(one, 0x5A, rb);
    CHECK(q[t].rows(x, one, 1, 384, w) == BQ_EINVAL, "%s: bad cols", q[t].name);
    if (!q[t].plain)
      CHECK(q[t].rows(x, one, 1, COLS, NULL) == BQ_EINVAL, "%s: no weights", q[t].name);
    CHECK(one[0] == 0x5A && one[rb - 1] == 0x5A, "%s: nothing written", q[t].name);
    free(all), free(one);
  }
  free(x);
}

static void no_tables(void) {
  float x[256] = {1}, w[256] = {1};
  uint8_t y[82];
  bq_quant_tables_drop(BQ_TYPE_IQ2_XXS);
  bq_quant_tables_drop(BQ_TYPE_IQ2_XS);
  bq_quant_tables_drop(BQ_TYPE_IQ2_S);
  bq_quant_tables_drop(BQ_TYPE_IQ1_M);
  CHECK(!bq_quant_tables_ready(BQ_TYPE_IQ2_XXS) && !bq_quant_tables_ready(BQ_TYPE_IQ2_S) &&
            !bq_quant_tables_ready(BQ_TYPE_IQ1_S),
        "dropped");
  bq_iq2_tables t;
  CHECK(!bq_iq2_tables_of(2048, &t) && !bq_iq2_tables_of(100, &t), "no tables to view");
  CHECK(bq_iq2_xxs_quantize_rows__ref(x, y, 1, 256, w) == BQ_ENOTABLES, "iq2_xxs: no tables");
  CHECK(bq_iq2_xs_quantize_rows__ref(x, y, 1, 256, w) == BQ_ENOTABLES, "iq2_xs: no tables");
  CHECK(bq_iq2_s_quantize_rows__ref(x, y, 1, 256, NULL) == BQ_ENOTABLES, "iq2_s: no tables");
  CHECK(bq_iq2_s_quantize_rows__ref(x, y, 1, 100, NULL) == BQ_EINVAL, "iq2_s: cols first");
  uint8_t *odd = malloc(bq_quant_tables_bytes(BQ_TYPE_IQ2_S) + 64);
  CHECK(bq_quant_tables_init(BQ_TYPE_IQ2_S, odd + ((uintptr_t)odd % 64 ? 0 : 8)) == BQ_EINVAL,
        "unaligned memory refused");
  free(odd);
}

int main(void) {
  void *mem[4] = {tables(BQ_TYPE_IQ2_XXS, 256), tables(BQ_TYPE_IQ2_XS, 512),
                  tables(BQ_TYPE_IQ2_S, 1024), tables(BQ_TYPE_IQ1_S, 2048)};
  bq_iq2_tables t;
  CHECK(bq_quant_tables_ready(BQ_TYPE_IQ1_M) && bq_iq2_tables_of(2048, &t) && t.grid == mem[3],
        "IQ1_M has IQ1_S's tables");
  quantizers();
  no_tables();
  for (int i = 0; i < 4; i++) free(mem[i]);
  return check_report("native IQ2 quantizers and iq2 tables");
}
