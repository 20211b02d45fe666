/* The IQ4_NL, IQ4_XS, MXFP4, TQ1_0 and TQ2_0 reference kernels against ggml's golden vectors
 * (tests/fixtures/golden-iq4), built with AddressSanitizer and UndefinedBehaviorSanitizer: the
 * value tables' SHA-256, quantize byte for byte (whole and block by block), dequantize bit for bit,
 * every dot to the bit (whole and fed one block at a time), MXFP4's shared exponent against
 * floorf(log2f()), then edge inputs (zeros, constants, outliers, tiny and huge scales, NaN, Inf)
 * that must run clean under the sanitizers, the bad-n rejections, and random block bytes. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../src/iquants4.h"
#include "check.h"

static const char *dir = "tests/fixtures/golden-iq4";

static void *slurp(const char *rel, size_t *len) { return bq_fixture(dir, rel, len); }

/* Each type with its block (elements, bytes), kernels, and the activation type of its dot. */
static const struct {
  const char *name;
  size_t bs, size;
  quant_fn q;
  dequant_fn dq;
  dot_fn dot, dot_f32;
  const char *t2;
  size_t size2; /* bytes of one activation block: Q8_0 34, Q8_K 292 */
} types[] = {
    {"iq4_nl", 32, 18, bq_iq4_nl_quantize__ref, bq_iq4_nl_dequantize__ref, bq_iq4_nl_dot_q8_0__ref,
     bq_iq4_nl_dot_f32__ref, "q8_0", 34},
    {"iq4_xs", 256, 136, bq_iq4_xs_quantize__ref, bq_iq4_xs_dequantize__ref,
     bq_iq4_xs_dot_q8_K__ref, bq_iq4_xs_dot_f32__ref, "q8_K", 292},
    {"mxfp4", 32, 17, bq_mxfp4_quantize__ref, bq_mxfp4_dequantize__ref, bq_mxfp4_dot_q8_0__ref,
     bq_mxfp4_dot_f32__ref, "q8_0", 34},
    {"tq1_0", 256, 54, bq_tq1_0_quantize__ref, bq_tq1_0_dequantize__ref, bq_tq1_0_dot_q8_K__ref,
     bq_tq1_0_dot_f32__ref, "q8_K", 292},
    {"tq2_0", 256, 66, bq_tq2_0_quantize__ref, bq_tq2_0_dequantize__ref, bq_tq2_0_dot_q8_K__ref,
     bq_tq2_0_dot_f32__ref, "q8_K", 292},
};
enum { NTYPES = sizeof types / sizeof *types, LANES = 16 };

static const char *inputs[] = {"gaussian", "gaussian_b",   "zeros",      "ramp",
                               "cauchy",   "block_scales", "small_ints", "outlier"};

static int sha256_is(const void *p, size_t len, const char *hex) {
  char got[65];
  sha256_hex(p, len, got);
  if (strcmp(got, hex)) fprintf(stderr, "sha256 %s\n  want %s\n", got, hex);
  return !strcmp(got, hex);
}

/* The tables are data copied from ggml: their SHA-256 as reference/IQUANTS.md gives them. */
static void tables(void) {
  CHECK(sha256_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        "sha256 self-test");
  CHECK(sha256_is(bq_kvalues_iq4nl, 16,
                  "61aa47540aa024b5d6ddaa839b84ffe59f3d5a349af5c6c7ffcb5e0474b46163"),
        "kvalues_iq4nl checksum");
  CHECK(sha256_is(bq_kvalues_mxfp4, 16,
                  "adf76b672d47eb7fc0afd4db132d548d59d3190aa0ad118fdbf569d5fd478f97"),
        "kvalues_mxfp4 checksum");
  /* E8M0 "half" scales: 2^(e-128) for every e, subnormal at 0 and 1, finite at 255. */
  for (int e = 0; e < 256; e++)
    CHECK(bq_e8m0_half((uint8_t)e) == ldexpf(1.0f, e - 128), "e8m0_half(%d)", e);
}

/* The bytes a type's quantize kernel must write for input (a golden input's name, or "edge"): the q
 * file (quantize_row_<t>_ref, which ggml_quantize_chunk runs without weights), except for IQ4_NL,
 * whose ggml_quantize_chunk runs quantize_iq4_nl's scale search instead: chunk/ holds what that
 * writes (made by llama.cpp's ggml, chunk/gen.mjs). */
static uint8_t *quantized(const char *input, const char *type, size_t *len) {
  char rel[128];
  if (!strcmp(type, "iq4_nl"))
    snprintf(rel, sizeof rel, "chunk/%s.iq4_nl.bin", input);
  else if (!strcmp(input, "edge"))
    snprintf(rel, sizeof rel, "edge/edge.%s.bin", type);
  else
    snprintf(rel, sizeof rel, "q/%s.%s.bin", input, type);
  return slurp(rel, len);
}

static void golden_codecs(void) {
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
    char rel[128], qrel[128];
    size_t nx;
    snprintf(rel, sizeof rel, "inputs/%s.f32", inputs[i]);
    float *x = slurp(rel, &nx);
    const size_t n = nx / 4;
    float *v = malloc(nx);
    for (size_t k = 0; k < n; k++) v[k] = x[(k * 7) % n];
    for (size_t t = 0; t < NTYPES; t++) {
      const size_t bs = types[t].bs, ts = types[t].size;
      size_t nq, ndq;
      snprintf(qrel, sizeof qrel, "q/%s.%s.bin", inputs[i], types[t].name);
      uint8_t *want_q = slurp(qrel, &nq);
      snprintf(rel, sizeof rel, "dq/%s.%s.f32", inputs[i], types[t].name);
      uint32_t *want_dq = slurp(rel, &ndq);
      CHECK(nq == n / bs * ts && ndq == nx, "%s size", qrel);
      size_t nc;
      uint8_t *want_c = quantized(inputs[i], types[t].name, &nc);
      CHECK(nc == nq, "%s: chunk size", qrel);
      uint8_t *q = malloc(nq), *q1 = malloc(nq);
      float *dq = malloc(ndq);
      memset(q, 0xA5, nq);
      CHECK(types[t].q(x, q, n) == BQ_OK, "quantize status");
      size_t diff = 0, first = nq;
      for (size_t k = 0; k < nq; k++) {
        if (q[k] == want_c[k]) continue;
        if (first == nq) first = k;
        diff++;
      }
      CHECK(diff == 0, "%s %s: quantize differs in %zu of %zu bytes (first at %zu: %02x want %02x)",
            inputs[i], types[t].name, diff, nq, first, first < nq ? q[first] : 0,
            first < nq ? want_c[first] : 0);
      /* One block at a time gives the same bytes: a block depends on its own values only. */
      for (size_t b = 0; b < n / bs; b++) types[t].q(x + b * bs, q1 + b * ts, bs);
      CHECK(!memcmp(q, q1, nq), "%s: quantized block by block differs", qrel);
      CHECK(types[t].dq(want_q, dq, n) == BQ_OK, "dequantize status");
      diff = 0;
      for (size_t k = 0; k < n; k++) diff += bits(dq[k]) != want_dq[k];
      CHECK(diff == 0, "%s: dequantize differs in %zu of %zu values", rel, diff, n);

      /* The fused f32 dot: dequantized value times v, summed in order. The expected value comes
       * from ggml's dq file, not from our dequantize. Also fed one block at a time. */
      float want = 0, acc[LANES] = {0}, acc1[LANES] = {0};
      const float *wdq = (const float *)want_dq;
      for (size_t k = 0; k < n; k++) want += wdq[k] * v[k];
      CHECK(dot_pieces(types[t].dot_f32, want_q, ts, (const uint8_t *)v, 4 * bs, bs, n, acc,
                       acc1) == BQ_OK,
            "dot f32 status");
      CHECK(bits(acc_sum(acc)) == bits(want) && bits(acc_sum(acc1)) == bits(want),
            "%s.%s dot f32: %a / %a want %a", inputs[i], types[t].name, acc_sum(acc), acc_sum(acc1),
            want);
      free(q), free(q1), free(dq), free(want_q), free(want_c), free(want_dq);
    }
    free(x), free(v);
  }
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
      snprintf(name, sizeof name, "%s_%s", types[t].name, types[t].t2);
      if (strcmp(name, pair)) continue;
      const size_t bs = types[t].bs, ts = types[t].size, ts2 = types[t].size2;
      CHECK(n % bs == 0 && n / bs * ts <= lx && n / bs * ts2 <= ly, "%s", line);
      float acc[LANES] = {0}, acc1[LANES] = {0};
      CHECK(dot_pieces(types[t].dot, xa, ts, ya, ts2, bs, n, acc, acc1) == BQ_OK, "dot status");
      for (int l = 1; l < LANES; l++) CHECK(acc[l] == 0 && acc1[l] == 0, "lanes 1.. unused");
      const uint32_t got = bits(acc_sum(acc)), got1 = bits(acc_sum(acc1));
      CHECK(got == want, "%s %s n=%u: got %08x want %08x", pair, xf, n, got, want);
      CHECK(got1 == want, "%s %s n=%u in pieces: got %08x want %08x", pair, xf, n, got1, want);
      count++;
      per_type[t]++;
    }
    free(xa), free(ya);
  }
  CHECK(count == 120, "expected 120 golden dots, ran %d", count);
  for (size_t t = 0; t < NTYPES; t++) CHECK(per_type[t] == 24, "%s dots", types[t].name);
  free(tsv);
}

/* MXFP4's shared exponent is ggml's (uint8_t)(floorf(log2f(amax)) - 2 + 127): checked against this
 * host's log2f (glibc's on the machine ggml's vectors come from) for the 64 floats on each side
 * of every power of two, where log2f rounds up, and for a spread of other magnitudes. The byte
 * conversion is x86-64's (bq_cvt_u8) for the negative values of amax < 2^-125. */
static void mxfp4_exponent(void) {
  long checked = 0, bad = 0;
  float x[32] = {0};
  block_mxfp4 b;
  for (int k = -149; k <= 128; k++) {
    const uint32_t p = k == 128 ? 0x7F800000u : bits(ldexpf(1.0f, k));
    for (int64_t o = -64; o <= 64; o++) {
      const int64_t u = (int64_t)p + o;
      if (u <= 0 || u >= 0x7F800000) continue;
      const float a = bq_float((uint32_t)u);
      x[9] = (o & 1) ? -a : a;
      bq_mxfp4_quantize__ref(x, &b, 32);
      const uint8_t want = bq_cvt_u8(floorf(log2f(a)) - 2 + 127);
      bad += b.e != want;
      if (b.e != want && bad < 5) fprintf(stderr, "mxfp4 e(%a) = %d want %d\n", a, b.e, want);
      checked++;
    }
  }
  x[9] = 0;
  uint64_t s = 12345;
  for (int r = 0; r < 200000; r++) {
    s = s * 6364136223846793005u + 1442695040888963407u;
    const uint32_t u = (uint32_t)(s >> 33) % 0x7F800000u;
    if (!u) continue;
    const float a = bq_float(u);
    x[31] = a;
    bq_mxfp4_quantize__ref(x, &b, 32);
    bad += b.e != bq_cvt_u8(floorf(log2f(a)) - 2 + 127);
    checked++;
  }
  x[31] = 0;
  CHECK(bad == 0, "mxfp4 exponent differs from floorf(log2f()) for %ld of %ld", bad, checked);
  x[3] = INFINITY;
  bq_mxfp4_quantize__ref(x, &b, 32);
  CHECK(b.e == 0, "mxfp4 e of Inf: %d", b.e);
  x[3] = NAN;
  bq_mxfp4_quantize__ref(x, &b, 32);
  CHECK(b.e == 0 && b.qs[3] == 0, "mxfp4 of NaN alone: e %d, code 0", b.e);
  x[3] = 1e-40f; /* floor(log2) = -133: -8 mod 256 */
  bq_mxfp4_quantize__ref(x, &b, 32);
  CHECK(b.e == 248, "mxfp4 e of 1e-40: %d", b.e);
}

/* Edge inputs, one super-block (8 blocks of 32) each: every kernel must run clean under the
 * sanitizers, and what ggml's code implies must hold. */
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
    x[6 * QK_K + e] = (e & 1 ? 3e38f : -3e38f);           /* 6: sums of squares overflow */
    x[7 * QK_K + e] = e == 5 ? NAN : g;                   /* 7: one NaN */
    x[8 * QK_K + e] = e == 200 ? INFINITY : g;            /* 8: one +Inf */
    x[9 * QK_K + e] = e == 0 ? -INFINITY : g;             /* 9: -Inf first */
    x[10 * QK_K + e] = NAN;                               /* 10: all NaN */
    x[11 * QK_K + e] = e < 16 ? g : 0.0f;                 /* 11: one live half block */
  }
}

static void edge_inputs(void) {
  float *x = malloc(N * 4), *dq = malloc(N * 4);
  uint8_t *q = malloc(N / 32 * 34 + N / QK_K * 292), *q80 = malloc(N / 32 * 34),
          *q8K = malloc(N / QK_K * 292);
  edge_fill(x);
  /* Activations: Q8_0 blocks of the edge values, built by hand (d = 1, codes e % 7 - 3), and
   * Q8_K blocks of the same codes with d = 0.5 and their bsums. */
  for (int b = 0; b < N / 32; b++) {
    bq_wr16(q80 + 34 * b, 0x3C00);
    for (int j = 0; j < 32; j++) q80[34 * b + 2 + j] = (uint8_t)(int8_t)((b * 32 + j) % 7 - 3);
  }
  for (int b = 0; b < N / QK_K; b++) {
    block_q8_K k8;
    k8.d = 0.5f;
    for (int j = 0; j < QK_K; j++) k8.qs[j] = (int8_t)((b * QK_K + j) % 7 - 3);
    for (int j = 0; j < 16; j++) {
      int s = 0;
      for (int l = 0; l < 16; l++) s += k8.qs[16 * j + l];
      k8.bsums[j] = (int16_t)s;
    }
    memcpy(q8K + 292 * b, &k8, sizeof k8);
  }
  for (size_t t = 0; t < NTYPES; t++) {
    const size_t bs = types[t].bs, ts = types[t].size;
    const float tol = !strcmp(types[t].name, "mxfp4") ? 0.2f : 0.01f; /* E2M1 steps up to 1.5x */
    CHECK(types[t].q(x, q, N) == BQ_OK, "%s edge quantize", types[t].name);
    CHECK(types[t].dq(q, dq, N) == BQ_OK, "%s edge dequantize", types[t].name);
    for (int e = 0; e < QK_K; e++) CHECK(dq[e] == 0, "%s zeros", types[t].name);
    for (int b = 1; b <= 2; b++) {
      float worst = 0;
      for (int e = 0; e < QK_K; e++) {
        const float err = fabsf(dq[b * QK_K + e] - x[b * QK_K + e]);
        worst = err > worst ? err : worst;
      }
      CHECK(worst <= tol * fabsf(x[b * QK_K]), "%s constant %g: max error %g", types[t].name,
            x[b * QK_K], worst);
    }
    CHECK(fabsf(dq[3 * QK_K + 77] - 1e4f) <= 1e4f * tol, "%s outlier kept: %g", types[t].name,
          dq[3 * QK_K + 77]);
    /* All-NaN input: IQ4 and MXFP4 find no scale (their max |x| scans skip NaN), so every
     * value decodes to 0; the ternary types' MAX(a, b) keeps the NaN, so d is NaN. */
    int zero = 1, nan = 1;
    for (int e = 0; e < QK_K; e++) {
      zero &= dq[10 * QK_K + e] == 0;
      nan &= dq[10 * QK_K + e] != dq[10 * QK_K + e];
    }
    CHECK(bs == 32 || ts == 136 ? zero : nan, "%s all-NaN block", types[t].name);
    float acc[LANES] = {0}, acc2[LANES] = {0};
    CHECK(types[t].dot_f32(q, x, N, acc) == BQ_OK, "dot f32");
    CHECK(types[t].dot(q, types[t].size2 == 34 ? q80 : q8K, N, acc2) == BQ_OK, "dot");
    /* n not a multiple of the block: BQ_EINVAL, nothing written. */
    for (size_t bad = 1; bad < 2 * bs; bad += bs / 8 + 3) {
      if (bad % bs == 0) continue;
      memset(q, 0x5A, 2 * ts);
      CHECK(types[t].q(x, q, bad) == BQ_EINVAL, "%s quantize n=%zu", types[t].name, bad);
      int untouched = 1;
      for (size_t k = 0; k < 2 * ts; k++) untouched &= q[k] == 0x5A;
      CHECK(untouched, "%s quantize n=%zu wrote", types[t].name, bad);
      for (size_t k = 0; k < 2 * bs; k++) dq[k] = 7.0f;
      CHECK(types[t].dq(q, dq, bad) == BQ_EINVAL, "%s dequantize n=%zu", types[t].name, bad);
      untouched = 1;
      for (size_t k = 0; k < 2 * bs; k++) untouched &= dq[k] == 7.0f;
      CHECK(untouched, "%s dequantize n=%zu wrote", types[t].name, bad);
      float a[LANES];
      for (int l = 0; l < LANES; l++) a[l] = 3.0f;
      CHECK(types[t].dot_f32(q, x, bad, a) == BQ_EINVAL, "dot f32 n=%zu", bad);
      CHECK(types[t].dot(q, q8K, bad, a) == BQ_EINVAL, "dot n=%zu", bad);
      untouched = 1;
      for (int l = 0; l < LANES; l++) untouched &= a[l] == 3.0f;
      CHECK(untouched, "%s dot n=%zu wrote", types[t].name, bad);
    }
  }
  /* Specific bytes ggml's code implies. IQ4_XS all-zero super-block: d = -0 (0x8000), every
   * 6-bit scale 32 (scales_l 0, scales_h 0xAAAA), every code best_index(0) = 8. */
  {
    block_iq4_xs b;
    bq_iq4_xs_quantize__ref(x, &b, QK_K);
    int ok = b.d == 0x8000 && b.scales_h == 0xAAAA;
    for (int j = 0; j < 4; j++) ok &= b.scales_l[j] == 0;
    for (int j = 0; j < 128; j++) ok &= b.qs[j] == 0x88;
    CHECK(ok, "iq4_xs zeros: d %04x scales_h %04x", b.d, b.scales_h);
  }
  /* TQ1_0 and TQ2_0 of trits -1, 0, +1 in every position decode exactly (d = 1). */
  {
    float t[QK_K], back[QK_K];
    uint8_t blk[66];
    for (int e = 0; e < QK_K; e++) t[e] = (float)((e * 5 + e / 7) % 3) - 1.0f;
    for (int k = 3; k < 5; k++) {
      types[k].q(t, blk, QK_K);
      types[k].dq(blk, back, QK_K);
      CHECK(!memcmp(t, back, sizeof t), "%s trits round trip", types[k].name);
    }
  }
  free(x), free(dq), free(q), free(q80), free(q8K);
}

/* edge/: 16 super-blocks of edge inputs (zeros after a live block, constants, an outlier, subnormal
 * and overflowing scales, NaN, Inf, ties, values at and below 1e-15, ...) run through ggml's own
 * reference code on x86-64 (edge/gen-edge.c): our quantize and dequantize must match it bit for
 * bit, NaN and Inf included (IQ4_NL's quantize: what ggml_quantize_chunk writes, chunk/), and so
 * must the dots over every single block and over the first 2, 3, ... blocks, whole and in
 * pieces. */
static void edge_golden(void) {
  size_t nx, n0, n8;
  float *x = slurp("edge/edge.f32", &nx);
  uint8_t *y0 = slurp("edge/edge_v.q8_0.bin", &n0), *y8 = slurp("edge/edge_v.q8_K.bin", &n8);
  const size_t n = nx / 4;
  for (size_t t = 0; t < NTYPES; t++) {
    const size_t bs = types[t].bs, ts = types[t].size;
    char rel[128];
    size_t nq, nc, ndq;
    snprintf(rel, sizeof rel, "edge/edge.%s.bin", types[t].name);
    uint8_t *want_q = slurp(rel, &nq), *want_c = quantized("edge", types[t].name, &nc);
    snprintf(rel, sizeof rel, "edge/edge.%s.f32", types[t].name);
    uint32_t *want_dq = slurp(rel, &ndq);
    CHECK(nq == n / bs * ts && nc == nq && ndq == nx, "%s size", rel);
    uint8_t *q = malloc(nq);
    float *dq = malloc(ndq);
    CHECK(types[t].q(x, q, n) == BQ_OK, "quantize status");
    for (size_t b = 0; b < n / bs; b++) {
      size_t diff = 0;
      for (size_t k = b * ts; k < (b + 1) * ts; k++) diff += q[k] != want_c[k];
      CHECK(diff == 0, "edge %s block %zu: quantize differs in %zu of %zu bytes", types[t].name, b,
            diff, ts);
    }
    CHECK(types[t].dq(want_q, dq, n) == BQ_OK, "dequantize status");
    for (size_t b = 0; b < n / bs; b++) {
      size_t diff = 0;
      for (size_t k = b * bs; k < (b + 1) * bs; k++) diff += bits(dq[k]) != want_dq[k];
      CHECK(diff == 0, "edge %s block %zu: dequantize differs in %zu values", types[t].name, b,
            diff);
    }
    free(q), free(dq), free(want_q), free(want_c), free(want_dq);
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
      snprintf(name, sizeof name, "%s_%s", types[t].name, types[t].t2);
      if (strcmp(name, pair)) continue;
      size_t lx;
      snprintf(xf, sizeof xf, "edge/edge.%s.bin", types[t].name);
      uint8_t *xa = slurp(xf, &lx);
      const size_t bs = types[t].bs, ts = types[t].size, ts2 = types[t].size2;
      const uint8_t *ya = ts2 == 34 ? y0 : y8;
      CHECK(start + nb <= lx / ts && start + nb <= (ts2 == 34 ? n0 : n8) / ts2, "%s", line);
      float acc[LANES] = {0}, acc1[LANES] = {0};
      CHECK(dot_pieces(types[t].dot, xa + start * ts, ts, ya + start * ts2, ts2, bs, nb * bs, acc,
                       acc1) == BQ_OK,
            "dot");
      /* A NaN result is any NaN: when a NaN scale (d from a NaN input, +NaN) meets an Inf * 0 term
       * (x86's default NaN, -NaN), which one the sum keeps depends on the order of the operands
       * of an addition, which C leaves to the compiler (and wasm canonicalizes NaN anyway). */
      uint32_t got = bits(acc_sum(acc)), got1 = bits(acc_sum(acc1));
      const int want_nan = (want & 0x7FFFFFFFu) > 0x7F800000u;
      if (want_nan && acc_sum(acc) != acc_sum(acc)) got = want;
      if (want_nan && acc_sum(acc1) != acc_sum(acc1)) got1 = want;
      CHECK(got == want && got1 == want, "edge %s blocks %u+%u: got %08x / %08x want %08x", pair,
            start, nb, got, got1, want);
      count++;
      free(xa);
    }
  }
  CHECK(count == 603, "expected 603 edge dots, ran %d", count);
  free(tsv), free(x), free(y0), free(y8);
}

/* Arbitrary bytes (any half or E8M0 scale, Inf and NaN included; any Q8_0 / Q8_K d) through every
 * decoder and dot: the sanitizers must stay quiet, the decoders must agree with the f32 dot against
 * a one-hot vector, and a dot fed one block at a time must equal the uncut one bit for bit. Seeded;
 * the seed is printed. */
static void random_blocks(void) {
  enum { RB = 8 };
  uint64_t seed = 0x2545F4914F6CDD1Du;
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
      const size_t bs = types[t].bs, ts = types[t].size, ts2 = types[t].size2;
      const size_t n = RB * QK_K; /* fits in RB * 292 bytes of x and of y for every type */
      CHECK(n / bs * ts <= RB * 292 && n / bs * ts2 <= RB * 292, "random sizes");
      CHECK(types[t].dq(a, dq, n) == BQ_OK, "random dequantize");
      float acc[LANES] = {0}, acc1[LANES] = {0};
      CHECK(dot_pieces(types[t].dot_f32, a, ts, (const uint8_t *)v, 4 * bs, bs, n, acc, acc1) ==
                BQ_OK,
            "random dot f32");
      CHECK(!memcmp(acc, acc1, sizeof acc), "%s random dot f32 in pieces", types[t].name);
      memset(acc, 0, sizeof acc), memset(acc1, 0, sizeof acc1);
      CHECK(dot_pieces(types[t].dot, a, ts, b, ts2, bs, n, acc, acc1) == BQ_OK, "random dot");
      CHECK(!memcmp(acc, acc1, sizeof acc), "%s random dot in pieces", types[t].name);
      /* The f32 dot of a block against a one-hot vector is the decoded value (x * 1 + 0 * the
       * others, in order), where the block decodes to finite values. */
      const size_t e = (size_t)round * 37 % n, b0 = e / bs * bs;
      int finite = 1;
      for (size_t k = b0; k < b0 + bs; k++) finite &= isfinite(dq[k]);
      if (finite) {
        float hot[QK_K] = {0}, h[LANES] = {0};
        hot[e - b0] = 1.0f;
        types[t].dot_f32(a + b0 / bs * ts, hot, bs, h);
        CHECK(bits(h[0]) == bits(dq[e] + 0.0f), "%s random decode %zu: %a vs %a", types[t].name, e,
              h[0], dq[e]);
      }
    }
  }
  free(a), free(b), free(dq), free(v);
}

int main(int argc, char **argv) {
  if (argc > 1) dir = argv[1];
  tables();
  golden_codecs();
  golden_dots();
  mxfp4_exponent();
  edge_inputs();
  edge_golden();
  random_blocks();
  return check_report("native golden IQ4/MXFP4/TQ");
}
