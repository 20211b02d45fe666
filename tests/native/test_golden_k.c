/* The K-quant reference kernels (Q2_K..Q6_K, Q8_K) against ggml's golden vectors
 * (tests/fixtures/golden-k), built with AddressSanitizer and UndefinedBehaviorSanitizer: quantize
 * byte for byte, dequantize bit for bit, every dot to the bit (whole and fed one super-block at a
 * time), then edge inputs (zeros, constants, outliers, tiny and huge scales, NaN, Inf) that must
 * run clean under the sanitizers, and the n % 256 != 0 rejections. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../src/kquants.h"
#include "check.h"

static const char *dir = "tests/fixtures/golden-k";

static void *slurp(const char *rel, size_t *len) { return bq_fixture(dir, rel, len); }

static const struct {
  const char *name;
  size_t size;
  quant_fn q;
  dequant_fn dq;
  dot_fn dot_q8_K, dot_f32;
} types[] = {
    {"q2_K", 84, bq_q2_K_quantize__ref, bq_q2_K_dequantize__ref, bq_q2_K_dot_q8_K__ref,
     bq_q2_K_dot_f32__ref},
    {"q3_K", 110, bq_q3_K_quantize__ref, bq_q3_K_dequantize__ref, bq_q3_K_dot_q8_K__ref,
     bq_q3_K_dot_f32__ref},
    {"q4_K", 144, bq_q4_K_quantize__ref, bq_q4_K_dequantize__ref, bq_q4_K_dot_q8_K__ref,
     bq_q4_K_dot_f32__ref},
    {"q5_K", 176, bq_q5_K_quantize__ref, bq_q5_K_dequantize__ref, bq_q5_K_dot_q8_K__ref,
     bq_q5_K_dot_f32__ref},
    {"q6_K", 210, bq_q6_K_quantize__ref, bq_q6_K_dequantize__ref, bq_q6_K_dot_q8_K__ref,
     bq_q6_K_dot_f32__ref},
    {"q8_K", 292, bq_q8_K_quantize__ref, bq_q8_K_dequantize__ref, NULL, bq_q8_K_dot_f32__ref},
};
enum { NTYPES = sizeof types / sizeof *types, LANES = 16 };

static const char *inputs[] = {"gaussian", "gaussian_b",   "zeros",      "ramp",
                               "cauchy",   "block_scales", "small_ints", "outlier"};

/* masks.tsv: byte ranges of a q file that ggml leaves unwritten (zeros.q8_K's bsums). */
static char *masks;

static void golden_codecs(void) {
  int masked_bytes = 0;
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
    char rel[128], qrel[128];
    size_t nx;
    snprintf(rel, sizeof rel, "inputs/%s.f32", inputs[i]);
    float *x = slurp(rel, &nx);
    const size_t n = nx / 4;
    for (size_t t = 0; t < NTYPES; t++) {
      size_t nq, ndq;
      snprintf(qrel, sizeof qrel, "q/%s.%s.bin", inputs[i], types[t].name);
      uint8_t *want_q = slurp(qrel, &nq);
      snprintf(rel, sizeof rel, "dq/%s.%s.f32", inputs[i], types[t].name);
      uint32_t *want_dq = slurp(rel, &ndq);
      CHECK(nq == n / QK_K * types[t].size && ndq == nx, "%s size", qrel);
      uint8_t *q = malloc(nq);
      float *dq = malloc(ndq);
      memset(q, 0xA5, nq);
      CHECK(types[t].q(x, q, n) == BQ_OK, "quantize status");
      size_t diff = 0, first = nq;
      for (size_t k = 0; k < nq; k++) {
        if (q[k] == want_q[k]) continue;
        if (masked(masks, qrel, k)) {
          masked_bytes++;
          continue;
        }
        if (first == nq) first = k;
        diff++;
      }
      CHECK(diff == 0, "%s: quantize differs in %zu of %zu bytes (first at %zu: %02x want %02x)",
            qrel, diff, nq, first, first < nq ? q[first] : 0, first < nq ? want_q[first] : 0);
      CHECK(types[t].dq(want_q, dq, n) == BQ_OK, "dequantize status");
      diff = 0;
      for (size_t k = 0; k < n; k++) diff += bits(dq[k]) != want_dq[k];
      CHECK(diff == 0, "%s: dequantize differs in %zu of %zu values", rel, diff, n);

      /* The fused f32 dot: dequantized value times v, summed in order. The expected value comes
       * from ggml's dq file, not from our dequantize. Also fed one super-block at a time. */
      float want = 0, acc[LANES] = {0}, acc1[LANES] = {0};
      const float *wdq = (const float *)want_dq;
      for (size_t k = 0; k < n; k++) want += wdq[k] * x[(k * 7) % n];
      float *v = malloc(nx);
      for (size_t k = 0; k < n; k++) v[k] = x[(k * 7) % n];
      CHECK(dot_pieces(types[t].dot_f32, want_q, types[t].size, (const uint8_t *)v, 4 * QK_K, QK_K,
                       n, acc, acc1) == BQ_OK,
            "dot f32 status");
      CHECK(bits(acc_sum(acc)) == bits(want) && bits(acc_sum(acc1)) == bits(want),
            "%s.%s dot f32: %a / %a want %a", inputs[i], types[t].name, acc_sum(acc), acc_sum(acc1),
            want);
      free(v), free(q), free(dq), free(want_q), free(want_dq);
    }
    free(x);
  }
  CHECK(masked_bytes == 0, "our zero-block bsums are zeros too (the golden file has 0 there)");
}

static void golden_dots(void) {
  size_t len;
  char *tsv = slurp("dots.tsv", &len);
  int count = 0, per_type[NTYPES] = {0};
  for (char *line = strtok(tsv, "\n"); line; line = strtok(NULL, "\n")) {
    char pair[32], xf[128], yf[128];
    unsigned n, want;
    if (sscanf(line, "%31s %127s %127s %u %x", pair, xf, yf, &n, &want) != 5) continue;
    size_t lx, ly;
    uint8_t *xa = slurp(xf, &lx), *ya = slurp(yf, &ly);
    for (size_t t = 0; t < NTYPES; t++) {
      char name[32];
      snprintf(name, sizeof name, "%s_q8_K", types[t].name);
      if (!types[t].dot_q8_K || strcmp(name, pair)) continue;
      CHECK(n % QK_K == 0 && n / QK_K * types[t].size <= lx && n / QK_K * 292 <= ly, "%s", line);
      float acc[LANES] = {0}, acc1[LANES] = {0};
      CHECK(dot_pieces(types[t].dot_q8_K, xa, types[t].size, ya, 292, QK_K, n, acc, acc1) == BQ_OK,
            "dot status");
      for (int l = 9; l < LANES; l++) CHECK(acc[l] == 0 && acc1[l] == 0, "lanes 9.. unused");
      const uint32_t got = bits(acc_sum(acc)), got1 = bits(acc_sum(acc1));
      CHECK(got == want, "%s %s n=%u: got %08x want %08x", pair, xf, n, got, want);
      CHECK(got1 == want, "%s %s n=%u in pieces: got %08x want %08x", pair, xf, n, got1, want);
      count++;
      per_type[t]++;
    }
    free(xa), free(ya);
  }
  CHECK(count == 120, "expected 120 golden dots, ran %d", count);
  for (size_t t = 0; t + 1 < NTYPES; t++) CHECK(per_type[t] == 24, "%s dots", types[t].name);
  free(tsv);
}

/* Edge inputs, one super-block each: every kernel must run clean under the sanitizers, and what
 * ggml's code implies must hold. */
enum { NB = 12, N = NB * QK_K };

static void edge_fill(float *x) {
  for (int e = 0; e < QK_K; e++) {
    const float g = (float)((e * 37) % 61 - 30) * 0.125f; /* a spread of values, both signs */
    x[0 * QK_K + e] = 0.0f;                               /* 0: zeros */
    x[1 * QK_K + e] = 1.5f;                               /* 1: positive constant */
    x[2 * QK_K + e] = -2.25f;                             /* 2: negative constant */
    x[3 * QK_K + e] = e == 77 ? 1e4f : g * 1e-3f;         /* 3: one huge outlier */
    x[4 * QK_K + e] = g * 1e-38f;                         /* 4: tiny: subnormal inputs */
    x[5 * QK_K + e] = g * 1e6f;                           /* 5: huge: fp16 d overflows */
    x[6 * QK_K + e] = (e & 1 ? 3e38f : -3e38f);           /* 6: max - min overflows to Inf */
    x[7 * QK_K + e] = e == 5 ? NAN : g;                   /* 7: one NaN */
    x[8 * QK_K + e] = e == 200 ? INFINITY : g;            /* 8: one +Inf */
    x[9 * QK_K + e] = e == 0 ? -INFINITY : g;             /* 9: -Inf first */
    x[10 * QK_K + e] = NAN;                               /* 10: all NaN */
    x[11 * QK_K + e] = e < 16 ? g : 0.0f;                 /* 11: one live sub-block */
  }
}

static void edge_inputs(void) {
  float *x = malloc(N * 4), *dq = malloc(N * 4);
  uint8_t *q = malloc(N / QK_K * 292), *q8 = malloc(N / QK_K * 292);
  edge_fill(x);
  CHECK(bq_q8_K_quantize__ref(x, q8, N) == BQ_OK, "q8_K edge");
  for (size_t t = 0; t < NTYPES; t++) {
    const size_t ts = types[t].size;
    CHECK(types[t].q(x, q, N) == BQ_OK, "%s edge quantize", types[t].name);
    CHECK(types[t].dq(q, dq, N) == BQ_OK, "%s edge dequantize", types[t].name);
    /* zeros decode to zeros; constants and the outlier block's outlier come back close. */
    for (int e = 0; e < QK_K; e++) CHECK(dq[e] == 0, "%s zeros", types[t].name);
    for (int b = 1; b <= 2; b++) {
      float worst = 0;
      for (int e = 0; e < QK_K; e++) {
        const float err = fabsf(dq[b * QK_K + e] - x[b * QK_K + e]);
        worst = err > worst ? err : worst;
      }
      /* A constant block has one non-zero sub-block scale pattern; ggml's fits reproduce it to
       * the fp16 rounding of d (and of dmin): well under 1% of the value for every type. */
      CHECK(worst <= 0.01f * fabsf(x[b * QK_K]), "%s constant %g: max error %g", types[t].name,
            x[b * QK_K], worst);
    }
    CHECK(fabsf(dq[3 * QK_K + 77] - 1e4f) <= 1e4f * 0.01f, "%s outlier kept: %g", types[t].name,
          dq[3 * QK_K + 77]);
    /* Blocks 0..11 each decode without touching their neighbours, and dots run on every block. */
    float acc[LANES] = {0};
    CHECK(types[t].dot_f32(q, x, N, acc) == BQ_OK, "dot f32");
    if (types[t].dot_q8_K) {
      float acc2[LANES] = {0};
      CHECK(types[t].dot_q8_K(q, q8, N, acc2) == BQ_OK, "dot q8_K");
    }
    /* n not a multiple of 256: BQ_EINVAL, nothing written. */
    for (size_t bad = 1; bad < 2 * QK_K; bad += 85) {
      if (bad % QK_K == 0) continue;
      memset(q, 0x5A, 2 * ts);
      CHECK(types[t].q(x, q, bad) == BQ_EINVAL, "%s quantize n=%zu", types[t].name, bad);
      int untouched = 1;
      for (size_t k = 0; k < 2 * ts; k++) untouched &= q[k] == 0x5A;
      CHECK(untouched, "%s quantize n=%zu wrote", types[t].name, bad);
      for (int k = 0; k < 2 * QK_K; k++) dq[k] = 7.0f;
      CHECK(types[t].dq(q, dq, bad) == BQ_EINVAL, "%s dequantize n=%zu", types[t].name, bad);
      untouched = 1;
      for (int k = 0; k < 2 * QK_K; k++) untouched &= dq[k] == 7.0f;
      CHECK(untouched, "%s dequantize n=%zu wrote", types[t].name, bad);
      float a[LANES];
      for (int l = 0; l < LANES; l++) a[l] = 3.0f;
      CHECK(types[t].dot_f32(q, x, bad, a) == BQ_EINVAL, "dot f32 n=%zu", bad);
      if (types[t].dot_q8_K)
        CHECK(types[t].dot_q8_K(q, q8, bad, a) == BQ_EINVAL, "dot q8_K n=%zu", bad);
      untouched = 1;
      for (int l = 0; l < LANES; l++) untouched &= a[l] == 3.0f;
      CHECK(untouched, "%s dot n=%zu wrote", types[t].name, bad);
    }
  }
  free(x), free(dq), free(q), free(q8);
}

/* edge/: 16 super-blocks of edge inputs (zeros, constants, an outlier, subnormal and overflowing
 * scales, NaN, Inf, ties, ...) run through ggml's own reference code on x86-64 (gen-edge.c): our
 * quantize and dequantize must match it bit for bit, NaN and Inf included, and so must the Q8_K
 * dots over every single super-block and over the first 2..16, whole and in pieces. */
static void edge_golden(void) {
  size_t nx, nv, n8;
  float *x = slurp("edge/edge.f32", &nx);
  uint8_t *y8 = slurp("edge/edge_v.q8_K.bin", &n8);
  float *v = slurp("edge/edge_v.f32", &nv);
  const size_t n = nx / 4;
  {
    uint8_t *q = malloc(n8);
    CHECK(bq_q8_K_quantize__ref(v, q, n) == BQ_OK && memcmp(q, y8, n8) == 0, "edge_v q8_K");
    free(q);
  }
  for (size_t t = 0; t < NTYPES; t++) {
    char rel[128];
    size_t nq, ndq;
    snprintf(rel, sizeof rel, "edge/edge.%s.bin", types[t].name);
    uint8_t *want_q = slurp(rel, &nq);
    snprintf(rel, sizeof rel, "edge/edge.%s.f32", types[t].name);
    uint32_t *want_dq = slurp(rel, &ndq);
    CHECK(nq == n / QK_K * types[t].size && ndq == nx, "%s size", rel);
    uint8_t *q = malloc(nq);
    float *dq = malloc(ndq);
    CHECK(types[t].q(x, q, n) == BQ_OK, "quantize status");
    for (size_t b = 0; b < n / QK_K; b++) {
      const size_t ts = types[t].size;
      size_t diff = 0;
      for (size_t k = b * ts; k < (b + 1) * ts; k++) diff += q[k] != want_q[k];
      CHECK(diff == 0, "edge %s block %zu: quantize differs in %zu of %zu bytes", types[t].name, b,
            diff, ts);
    }
    CHECK(types[t].dq(want_q, dq, n) == BQ_OK, "dequantize status");
    for (size_t b = 0; b < n / QK_K; b++) {
      size_t diff = 0;
      for (size_t k = b * QK_K; k < (b + 1) * QK_K; k++) diff += bits(dq[k]) != want_dq[k];
      CHECK(diff == 0, "edge %s block %zu: dequantize differs in %zu values", types[t].name, b,
            diff);
    }
    free(q), free(dq), free(want_q), free(want_dq);
  }
  size_t len;
  char *tsv = slurp("edge/dots.tsv", &len);
  int count = 0;
  for (char *line = strtok(tsv, "\n"); line; line = strtok(NULL, "\n")) {
    char pair[32], xf[64];
    unsigned start, nb, want;
    if (sscanf(line, "%31s %u %u %x", pair, &start, &nb, &want) != 4) continue;
    for (size_t t = 0; t < NTYPES; t++) {
      char name[32];
      snprintf(name, sizeof name, "%s_q8_K", types[t].name);
      if (!types[t].dot_q8_K || strcmp(name, pair)) continue;
      size_t lx;
      snprintf(xf, sizeof xf, "edge/edge.%s.bin", types[t].name);
      uint8_t *xa = slurp(xf, &lx);
      const size_t ts = types[t].size;
      CHECK(start + nb <= lx / ts && start + nb <= n8 / 292, "%s", line);
      float acc[LANES] = {0}, acc1[LANES] = {0};
      CHECK(dot_pieces(types[t].dot_q8_K, xa + start * ts, ts, y8 + start * 292, 292, QK_K,
                       nb * QK_K, acc, acc1) == BQ_OK,
            "dot");
      const uint32_t got = bits(acc_sum(acc)), got1 = bits(acc_sum(acc1));
      CHECK(got == want && got1 == want, "edge %s blocks %u+%u: got %08x / %08x want %08x", pair,
            start, nb, got, got1, want);
      count++;
      free(xa);
    }
  }
  CHECK(count == 155, "expected 155 edge dots, ran %d", count);
  free(tsv), free(x), free(y8), free(v);
}

/* Arbitrary bytes (any half, including Inf and NaN scales; any Q8_K d and bsums) through every
 * decoder and dot: the sanitizers must stay quiet, and a dot fed one super-block at a time must
 * equal the uncut one bit for bit. Seeded; the seed is printed. */
static void random_blocks(void) {
  enum { RB = 8 };
  uint64_t seed = 0x9E3779B97F4A7C15u;
  printf("random_blocks: seed %016llx\n", (unsigned long long)seed);
  uint8_t *a = malloc(RB * 292), *b = malloc(RB * 292);
  float *dq = malloc(RB * QK_K * 4), *v = malloc(RB * QK_K * 4);
  for (int round = 0; round < 50; round++) {
    for (int k = 0; k < RB * 292; k++) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      a[k] = (uint8_t)(seed >> 56);
      b[k] = (uint8_t)(seed >> 48);
    }
    for (int k = 0; k < RB * QK_K; k++) v[k] = (float)(k % 13) - 6.0f;
    for (size_t t = 0; t < NTYPES; t++) {
      const size_t ts = types[t].size;
      CHECK(types[t].dq(a, dq, RB * QK_K) == BQ_OK, "random dequantize");
      float acc[LANES] = {0}, acc1[LANES] = {0};
      CHECK(dot_pieces(types[t].dot_f32, a, ts, (const uint8_t *)v, 4 * QK_K, QK_K, RB * QK_K, acc,
                       acc1) == BQ_OK,
            "random dot f32");
      CHECK(!memcmp(acc, acc1, sizeof acc), "%s random dot f32 in pieces", types[t].name);
      if (!types[t].dot_q8_K) continue;
      memset(acc, 0, sizeof acc), memset(acc1, 0, sizeof acc1);
      CHECK(dot_pieces(types[t].dot_q8_K, a, ts, b, 292, QK_K, RB * QK_K, acc, acc1) == BQ_OK,
            "random dot q8_K");
      CHECK(!memcmp(acc, acc1, sizeof acc), "%s random dot q8_K in pieces", types[t].name);
    }
  }
  free(a), free(b), free(dq), free(v);
}

int main(int argc, char **argv) {
  if (argc > 1) dir = argv[1];
  size_t len;
  masks = slurp("masks.tsv", &len);
  golden_codecs();
  golden_dots();
  edge_inputs();
  edge_golden();
  random_blocks();
  free(masks);
  return check_report("native golden K");
}
