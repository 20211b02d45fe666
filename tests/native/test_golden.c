/* Native reference kernels against ggml's golden vectors (tests/fixtures/golden), built with
 * AddressSanitizer and UndefinedBehaviorSanitizer. Also runs every reference kernel over edge
 * inputs (NaN, Inf, huge, subnormal) so the sanitizers see those paths. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../src/bq.h"
#include "check.h"

static const char *dir = "tests/fixtures/golden";

static void *slurp(const char *rel, size_t *len) { return bq_fixture(dir, rel, len); }

static const struct {
  const char *name;
  int size;
  quant_fn q;
  dequant_fn dq;
} types[] = {
    {"q4_0", 18, bq_q4_0_quantize__ref, bq_q4_0_dequantize__ref},
    {"q4_1", 20, bq_q4_1_quantize__ref, bq_q4_1_dequantize__ref},
    {"q5_0", 22, bq_q5_0_quantize__ref, bq_q5_0_dequantize__ref},
    {"q5_1", 24, bq_q5_1_quantize__ref, bq_q5_1_dequantize__ref},
    {"q8_0", 34, bq_q8_0_quantize__ref, bq_q8_0_dequantize__ref},
    {"q8_1", 36, bq_q8_1_quantize__ref, bq_q8_1_dequantize__ref},
};

static const struct {
  const char *name;
  dot_fn f;
} dots[] = {
    {"q4_0_q8_0", bq_q4_0_dot_q8_0__ref}, {"q4_1_q8_1", bq_q4_1_dot_q8_1__ref},
    {"q5_0_q8_0", bq_q5_0_dot_q8_0__ref}, {"q5_1_q8_1", bq_q5_1_dot_q8_1__ref},
    {"q8_0_q8_0", bq_q8_0_dot_q8_0__ref},
};

static const char *inputs[] = {"gaussian",  "gaussian_b", "zeros", "alternating",
                               "tiny_1e-8", "negmax",     "ramp",  "round_half"};

static void golden_codecs(void) {
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
    char rel[128];
    size_t nx;
    snprintf(rel, sizeof rel, "inputs/%s.f32", inputs[i]);
    float *x = slurp(rel, &nx);
    const size_t n = nx / 4;
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
      size_t nq, ndq;
      snprintf(rel, sizeof rel, "q/%s.%s.bin", inputs[i], types[t].name);
      uint8_t *want_q = slurp(rel, &nq);
      snprintf(rel, sizeof rel, "dq/%s.%s.f32", inputs[i], types[t].name);
      uint32_t *want_dq = slurp(rel, &ndq);
      uint8_t *q = malloc(nq);
      float *dq = malloc(ndq);
      CHECK(nq == n / 32 * types[t].size, "%s size", rel);
      CHECK(types[t].q(x, q, n) == BQ_OK, "quantize status");
      size_t diff = 0;
      for (size_t k = 0; k < nq; k++) diff += q[k] != want_q[k];
      CHECK(diff == 0, "%s.%s: quantize differs in %zu of %zu bytes", inputs[i], types[t].name,
            diff, nq);
      CHECK(types[t].dq(want_q, dq, n) == BQ_OK, "dequantize status");
      diff = 0;
      for (size_t k = 0; k < n; k++) {
        uint32_t got;
        memcpy(&got, &dq[k], 4);
        diff += got != want_dq[k];
      }
      CHECK(diff == 0, "%s.%s: dequantize differs in %zu of %zu values", inputs[i], types[t].name,
            diff, n);
      free(q), free(dq), free(want_q), free(want_dq);
    }
    free(x);
  }
}

static void golden_dots(void) {
  size_t len;
  char *tsv = slurp("dots.tsv", &len);
  tsv = realloc(tsv, len + 1);
  tsv[len] = 0;
  int count = 0;
  for (char *line = strtok(tsv, "\n"); line; line = strtok(NULL, "\n")) {
    char pair[32], xf[128], yf[128];
    unsigned n, bits;
    if (sscanf(line, "%31s %127s %127s %u %x", pair, xf, yf, &n, &bits) != 5) continue;
    size_t lx, ly;
    uint8_t *xa = slurp(xf, &lx), *ya = slurp(yf, &ly);
    for (size_t d = 0; d < sizeof dots / sizeof *dots; d++) {
      if (strcmp(dots[d].name, pair)) continue;
      float acc[BQ_ACC_LANES] = {0};
      CHECK(dots[d].f(xa, ya, n, acc) == BQ_OK, "dot status");
      const float r = bq_acc_sum__ref(acc);
      uint32_t got;
      memcpy(&got, &r, 4);
      CHECK(got == bits, "%s %s.%s n=%u: got %08x want %08x", pair, xf, yf, n, got, bits);
      count++;
    }
    free(xa), free(ya);
  }
  CHECK(count == 90, "expected 90 golden dots, ran %d", count);
  free(tsv);
}

/* Every reference kernel over inputs with NaN, Inf, huge and subnormal values: the sanitizers must
 * stay quiet, and the facts ggml's code implies must hold. */
static void edge_inputs(void) {
  enum { N = 32 * 8 };
  float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)((i * 37) % 61 - 30) * 0.25f;
  x[3] = NAN;                                                       /* block 0: one NaN */
  x[32 + 5] = INFINITY;                                             /* block 1: +Inf */
  x[64 + 7] = -INFINITY;                                            /* block 2: -Inf */
  for (int j = 0; j < 32; j++) x[96 + j] = NAN;                     /* block 3: all NaN */
  for (int j = 0; j < 32; j++) x[128 + j] = (float)(j - 16) * 1e5f; /* block 4: d overflows fp16 */
  for (int j = 0; j < 32; j++) x[160 + j] = (float)(j - 16) * 1e-41f; /* block 5: subnormal */
  for (int j = 0; j < 32; j++) x[192 + j] = 3e38f * (j & 1 ? 1 : -1); /* block 6: max - min = inf */
  uint8_t q[N * 4];
  float dq[N], rmse[8], mx[8], sc[8];
  for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
    CHECK(types[t].q(x, q, N) == BQ_OK, "edge quantize");
    CHECK(types[t].dq(q, dq, N) == BQ_OK, "edge dequantize");
  }
  /* ggml's Q8_0: in an all-NaN block MAX() keeps NaN: d is NaN (0x7E00), every code roundf(NaN) ->
   * 0 on x86. */
  bq_q8_0_quantize__ref(x, q, N);
  CHECK(q[3 * 34] == 0x00 && q[3 * 34 + 1] == 0x7E, "all-NaN q8_0 d");
  for (int j = 0; j < 32; j++) CHECK(q[3 * 34 + 2 + j] == 0, "all-NaN q8_0 code");
  /* A NaN is not carried by ggml's MAX(): block 0's scale comes from the other elements. */
  CHECK(q[0] != 0 || q[1] != 0, "q8_0 d of a block with one NaN is finite and non-zero");
  CHECK(bq_q4_0_stats__ref(x, N, rmse, mx, sc, NULL, NULL) == BQ_OK, "stats");
  CHECK(bq_q8_0_stats__ref(x, N, rmse, mx, sc, NULL, NULL) == BQ_OK, "stats");
  CHECK(bq_f16_stats__ref(x, N, rmse, mx, sc, NULL, NULL) == BQ_OK, "stats");
  float acc[BQ_ACC_LANES] = {0};
  CHECK(bq_q4_0_dot_f32__ref(q, x, N, acc) == BQ_OK, "dot");
  CHECK(bq_q4_0_quantize__ref(x, q, 31) == BQ_EINVAL, "n not a multiple of 32");
  float y[4];
  CHECK(bq_q8_0_matvec_q8_0__ref(q, 2, 64, q, y) == BQ_OK, "matvec");
  CHECK(bq_q8_0_matvec_f32__ref(q, 1, 33, x, y) == BQ_EINVAL, "matvec cols");
}

static void type_table(void) {
  CHECK(bq_type_block_size(BQ_TYPE_Q4_0) == 32 && bq_type_size(BQ_TYPE_Q4_0) == 18, "q4_0");
  CHECK(bq_type_size(4) == 0 && bq_type_name(4) == NULL, "retired id 4 is unknown");
  CHECK(bq_type_name(-1) == NULL && bq_type_name(1000) == NULL, "out of range ids");
  CHECK(strcmp(bq_type_name(BQ_TYPE_BF16), "bf16") == 0, "bf16 name");
  CHECK(bq_type_vec_dot(BQ_TYPE_Q5_1) == BQ_TYPE_Q8_1, "q5_1 pairs with q8_1");
}

int main(int argc, char **argv) {
  if (argc > 1) dir = argv[1];
  golden_codecs();
  golden_dots();
  edge_inputs();
  type_table();
  return check_report("native golden");
}
