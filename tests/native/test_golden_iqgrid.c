/* The lattice IQ reference kernels (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) against
 * ggml's golden vectors (tests/fixtures/golden-iqgrid), built with AddressSanitizer and
 * UndefinedBehaviorSanitizer: the SHA-256 of every grid and sign table, dequantize bit for bit,
 * every Q8_K dot to the bit (whole and fed in pieces), the fused f32 dots, then edge blocks (zero,
 * subnormal, huge, Inf and NaN scales), n % 256 != 0 rejections, and random blocks checked against
 * a model of the decoders written from IQUANTS.md in double arithmetic. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../src/iquants.h"
#include "check.h"

static const char *dir = "tests/fixtures/golden-iqgrid";

static void *slurp(const char *rel, size_t *len) { return bq_fixture(dir, rel, len); }

typedef float (*sum_fn)(const float *);

enum { IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M };

static const struct {
  const char *name;
  size_t size;
  dequant_fn dq;
  dot_fn dot_q8_K, dot_f32;
  sum_fn sum_q8_K; /* how the pair's state gives ggml's result */
} types[] = {
    [IQ2_XXS] = {"iq2_xxs", 66, bq_iq2_xxs_dequantize__ref, bq_iq2_xxs_dot_q8_K__ref,
                 bq_iq2_xxs_dot_f32__ref, bq_iq2_xxs_dot_q8_K_sum__ref},
    [IQ2_XS] = {"iq2_xs", 74, bq_iq2_xs_dequantize__ref, bq_iq2_xs_dot_q8_K__ref,
                bq_iq2_xs_dot_f32__ref, bq_iq2_xs_dot_q8_K_sum__ref},
    [IQ2_S] = {"iq2_s", 82, bq_iq2_s_dequantize__ref, bq_iq2_s_dot_q8_K__ref, bq_iq2_s_dot_f32__ref,
               bq_iq2_s_dot_q8_K_sum__ref},
    [IQ3_XXS] = {"iq3_xxs", 98, bq_iq3_xxs_dequantize__ref, bq_iq3_xxs_dot_q8_K__ref,
                 bq_iq3_xxs_dot_f32__ref, bq_iq3_xxs_dot_q8_K_sum__ref},
    [IQ3_S] = {"iq3_s", 110, bq_iq3_s_dequantize__ref, bq_iq3_s_dot_q8_K__ref,
               bq_iq3_s_dot_f32__ref, acc_sum},
    [IQ1_S] = {"iq1_s", 50, bq_iq1_s_dequantize__ref, bq_iq1_s_dot_q8_K__ref, bq_iq1_s_dot_f32__ref,
               acc_sum},
    [IQ1_M] = {"iq1_m", 56, bq_iq1_m_dequantize__ref, bq_iq1_m_dot_q8_K__ref, bq_iq1_m_dot_f32__ref,
               acc_sum},
};
enum { NTYPES = sizeof types / sizeof *types, LANES = 16, Q8K = 292 };

static const char *inputs[] = {"gaussian", "gaussian_b",   "zeros",      "ramp",
                               "cauchy",   "block_scales", "small_ints", "outlier"};

/* A table's bytes as ggml's little-endian array holds them, whatever this host's byte order. */
static void table_hash(const void *t, size_t count, size_t width, char hex[65]) {
  uint8_t *b = malloc(count * width);
  for (size_t i = 0; i < count; i++) {
    uint64_t v = width == 8   ? ((const uint64_t *)t)[i]
                 : width == 4 ? ((const uint32_t *)t)[i]
                              : ((const uint8_t *)t)[i];
    for (size_t j = 0; j < width; j++) b[i * width + j] = (uint8_t)(v >> 8 * j);
  }
  sha256_hex(b, count * width, hex);
  free(b);
}

/* The SHA-256 values IQUANTS.md gives for ggml's tables at d99724f. */
static void table_checksums(void) {
  char hex[65];
  sha256_hex((const uint8_t *)"abc", 3, hex);
  CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        "sha256 self-test: %s", hex);
  static const struct {
    const char *name;
    const void *t;
    size_t count, width;
    const char *want;
  } tabs[] = {
      {"kmask_iq2xs", bq_kmask_iq2xs, 8, 1,
       "5ac9831b2e30eb285ef34f8501620f878432d5c04331ad1ae47f977a83ba41a5"},
      {"ksigns_iq2xs", bq_ksigns_iq2xs, 128, 1,
       "a76742a603f8beca5212ecce0f1f02f11a4887fd2f7c8b15aca0ea3eb3380c31"},
      {"iq2xxs_grid", bq_iq2xxs_grid, 256, 8,
       "05826b5d3e472a3a78f196be62ac78acf81df0f909626e12ab9fa2a5d490dd54"},
      {"iq2xs_grid", bq_iq2xs_grid, 512, 8,
       "06e47aaca60b4dc1d9b5a3f34540437058a6b142b4d7a59d5ded769b4d1bf1de"},
      {"iq2s_grid", bq_iq2s_grid, 1024, 8,
       "e1aa1473412b0552c2174c30ef22ab4073f6a181b85a17056e8249bd2932fd88"},
      {"iq3xxs_grid", bq_iq3xxs_grid, 256, 4,
       "46e35f5a997efdee6c99ce57854c8a0d4f0ff8ca57e5e8a60c0793ea580acf5d"},
      {"iq3s_grid", bq_iq3s_grid, 512, 4,
       "bd1af4945a1717c65610b0284e4628b9a1ba3b306fae3a06f6e5f597356e349f"},
      {"iq1s_grid", bq_iq1s_grid, 2048, 8,
       "07540ffc1aeaf6ad4d97e96b0fcc765aae39671d4ae4a27bbd0e796fde167c6a"},
  };
  for (size_t i = 0; i < sizeof tabs / sizeof *tabs; i++) {
    table_hash(tabs[i].t, tabs[i].count, tabs[i].width, hex);
    CHECK(!strcmp(hex, tabs[i].want), "%s sha256 %s want %s", tabs[i].name, hex, tabs[i].want);
  }
  /* What the tables mean (IQUANTS.md), independently of the hashes. */
  for (int i = 0; i < 128; i++) {
    int parity = 0;
    for (int j = 0; j < 7; j++) parity ^= i >> j & 1;
    CHECK(bq_ksigns_iq2xs[i] == (i | parity << 7), "ksigns_iq2xs[%d]", i);
  }
  for (int j = 0; j < 8; j++) CHECK(bq_kmask_iq2xs[j] == 1 << j, "kmask_iq2xs[%d]", j);
  int bad = 0;
  for (int i = 0; i < 1024; i++)
    for (int j = 0; j < 8; j++) {
      const uint64_t g[3] = {bq_iq2xxs_grid[i % 256], bq_iq2xs_grid[i % 512], bq_iq2s_grid[i]};
      for (int k = 0; k < 3; k++) {
        const int v = (int)(g[k] >> 8 * j & 0xFF);
        bad += v != 8 && v != 25 && v != 43;
      }
      const int v3 = (int)(bq_iq3xxs_grid[i % 256] >> 8 * (j % 4) & 0xFF);
      bad += v3 % 8 != 4 && v3 != 62;
      const int v3s = (int)(bq_iq3s_grid[i % 512] >> 8 * (j % 4) & 0xFF);
      bad += v3s % 2 != 1 || v3s > 15;
    }
  for (int i = 0; i < 2048; i++)
    for (int j = 0; j < 8; j++) {
      const int v = (int8_t)(bq_iq1s_grid[i] >> 8 * j);
      bad += v < -1 || v > 1;
    }
  CHECK(bad == 0, "%d grid values outside their sets", bad);
}

/* ---- A model of the decoders, written from IQUANTS.md ----
 * Element e of a block, read straight from its bytes at the documented offsets, in double. For a
 * finite scale every product the decoders form is exact in binary32 (at most 22 significant bits),
 * so the model rounded to float must equal the kernel's value bit for bit. */

static unsigned u16_at(const uint8_t *b, int off) { return b[off] | b[off + 1] << 8; }
static uint32_t u32_at(const uint8_t *b, int off) {
  return (uint32_t)u16_at(b, off) | (uint32_t)u16_at(b, off + 2) << 16;
}
static double half_at(const uint8_t *b, int off) {
  return bq_fp16_to_fp32((uint16_t)u16_at(b, off));
}
static int byte_of(uint64_t entry, int j) { return (int)(entry >> 8 * j & 0xFF); }
static double sign_of(int signs, int j) { return signs >> j & 1 ? -1.0 : 1.0; }

/* The (fp16) super-block scale of a block: IQ1_M assembles it from the scales' top nibbles. */
static double block_d(int t, const uint8_t *b) {
  if (t != IQ1_M) return half_at(b, 0);
  unsigned h = 0;
  for (int k = 0; k < 4; k++) h |= (u16_at(b, 48 + 2 * k) >> 12) << 4 * k;
  return bq_fp16_to_fp32((uint16_t)h);
}

static double model(int t, const uint8_t *b, int e) {
  const int ib = e / 32, g = e % 32 / 8, j = e % 8;
  const double D = block_d(t, b);
  switch (t) {
    case IQ2_XXS: {
      const uint32_t w = u32_at(b, 2 + 8 * ib + 4);
      const double db = D * (0.5 + (w >> 28)) * 0.25;
      const int signs = bq_ksigns_iq2xs[w >> 7 * g & 127];
      return db * byte_of(bq_iq2xxs_grid[b[2 + 8 * ib + g]], j) * sign_of(signs, j);
    }
    case IQ2_XS: {
      const unsigned v = u16_at(b, 2 + 2 * (4 * ib + g));
      const int s = b[66 + ib] >> 4 * (g / 2) & 15;
      return D * (0.5 + s) * 0.25 * byte_of(bq_iq2xs_grid[v & 511], j) *
             sign_of(bq_ksigns_iq2xs[v >> 9], j);
    }
    case IQ2_S: {
      const int idx = b[2 + 4 * ib + g] | (b[66 + ib] >> 2 * g & 3) << 8;
      const int s = b[74 + ib] >> 4 * (g / 2) & 15;
      return D * (0.5 + s) * 0.25 * byte_of(bq_iq2s_grid[idx], j) * sign_of(b[34 + 4 * ib + g], j);
    }
    case IQ3_XXS: {
      const uint32_t w = u32_at(b, 66 + 4 * ib);
      const int idx = b[2 + 8 * ib + 2 * g + j / 4];
      return D * (0.5 + (w >> 28)) * 0.5 * byte_of(bq_iq3xxs_grid[idx], j % 4) *
             sign_of(bq_ksigns_iq2xs[w >> 7 * g & 127], j);
    }
    case IQ3_S: {
      const int k = 2 * g + j / 4;
      const int idx = b[2 + 8 * ib + k] | (b[66 + ib] >> k & 1) << 8;
      const int s = b[106 + ib / 2] >> 4 * (ib % 2) & 15;
      return D * (1 + 2 * s) * byte_of(bq_iq3s_grid[idx], j % 4) * sign_of(b[74 + 4 * ib + g], j);
    }
    case IQ1_S: {
      const unsigned h = u16_at(b, 34 + 2 * ib);
      const int idx = b[2 + 4 * ib + g] | (h >> 3 * g & 7) << 8;
      const double delta = h & 0x8000 ? -0.125 : 0.125;
      return D * (2 * (h >> 12 & 7) + 1) * ((int8_t)byte_of(bq_iq1s_grid[idx], j) + delta);
    }
    default: { /* IQ1_M */
      const int nib = b[32 + 2 * ib + g / 2] >> 4 * (g % 2) & 15;
      const int idx = b[4 * ib + g] | (nib & 7) << 8;
      const double delta = nib & 8 ? -0.125 : 0.125;
      const int s = u16_at(b, 48 + 2 * (ib / 2)) >> (6 * (ib % 2) + 3 * (g / 2)) & 7;
      return D * (2 * s + 1) * ((int8_t)byte_of(bq_iq1s_grid[idx], j) + delta);
    }
  }
}

/* ---- ggml's golden vectors ---- */

/* dequantize(q) against ggml's dq file and the model; the fused f32 dot against ggml's dq file
 * times v summed in order, whole and fed one super-block at a time (and cut after 3). */
static void golden_codecs(void) {
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
    char rel[128];
    size_t nx;
    snprintf(rel, sizeof rel, "inputs/%s.f32", inputs[i]);
    float *x = slurp(rel, &nx);
    const size_t n = nx / 4;
    for (size_t t = 0; t < NTYPES; t++) {
      size_t nq, ndq;
      snprintf(rel, sizeof rel, "q/%s.%s.bin", inputs[i], types[t].name);
      uint8_t *q = slurp(rel, &nq);
      snprintf(rel, sizeof rel, "dq/%s.%s.f32", inputs[i], types[t].name);
      float *want = slurp(rel, &ndq);
      CHECK(nq == n / QK_K * types[t].size && ndq == nx, "%s size", rel);
      float *dq = malloc(ndq);
      CHECK(types[t].dq(q, dq, n) == BQ_OK, "dequantize status");
      size_t diff = 0, off_model = 0;
      for (size_t k = 0; k < n; k++) {
        diff += bits(dq[k]) != bits(want[k]);
        off_model += bits((float)model((int)t, q + k / QK_K * types[t].size, (int)(k % QK_K))) !=
                     bits(want[k]);
      }
      CHECK(diff == 0, "%s: dequantize differs in %zu of %zu values", rel, diff, n);
      CHECK(off_model == 0, "%s: the model differs in %zu values", rel, off_model);

      float *v = malloc(nx), sum = 0, acc[LANES] = {0}, acc1[LANES] = {0}, acc3[LANES] = {0};
      for (size_t k = 0; k < n; k++) v[k] = x[(k * 7) % n];
      for (size_t k = 0; k < n; k++) sum += want[k] * v[k];
      CHECK(dot_pieces(types[t].dot_f32, q, types[t].size, (const uint8_t *)v, 4 * QK_K, QK_K, n,
                       acc, acc1) == BQ_OK,
            "dot f32 status");
      types[t].dot_f32(q, v, 3 * QK_K, acc3);
      types[t].dot_f32(q + 3 * types[t].size, v + 3 * QK_K, n - 3 * QK_K, acc3);
      CHECK(bits(acc_sum(acc)) == bits(sum) && !memcmp(acc, acc1, sizeof acc) &&
                !memcmp(acc, acc3, sizeof acc),
            "%s.%s dot f32: %a / %a / %a want %a", inputs[i], types[t].name, acc_sum(acc),
            acc_sum(acc1), acc_sum(acc3), sum);
      free(v), free(q), free(dq), free(want);
    }
    free(x);
  }
}

/* Every dot of the manifest for these types, to the bit, whole and in pieces: one super-block at
 * a time, and cut after the first. */
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
      if (strcmp(name, pair)) continue;
      const size_t ts = types[t].size, nb = n / QK_K;
      CHECK(n % QK_K == 0 && nb * ts <= lx && nb * Q8K <= ly, "%s", line);
      float acc[LANES] = {0}, acc1[LANES] = {0}, acc2[LANES] = {0};
      CHECK(dot_pieces(types[t].dot_q8_K, xa, ts, ya, Q8K, QK_K, n, acc, acc1) == BQ_OK,
            "dot status");
      types[t].dot_q8_K(xa, ya, QK_K, acc2);
      types[t].dot_q8_K(xa + ts, ya + Q8K, n - QK_K, acc2);
      for (int l = 1; l < LANES; l++) CHECK(acc[l] == 0, "lanes 1.. unused");
      const uint32_t got = bits(types[t].sum_q8_K(acc)), got1 = bits(types[t].sum_q8_K(acc1)),
                     got2 = bits(types[t].sum_q8_K(acc2));
      CHECK(got == want, "%s %s n=%u: got %08x want %08x", pair, xf, n, got, want);
      CHECK(got1 == want && got2 == want, "%s %s n=%u in pieces: got %08x, %08x want %08x", pair,
            xf, n, got1, got2, want);
      count++;
      per_type[t]++;
    }
    free(xa), free(ya);
  }
  CHECK(count == 168, "expected 168 golden dots, ran %d", count);
  for (size_t t = 0; t < NTYPES; t++) CHECK(per_type[t] == 24, "%s dots", types[t].name);
  free(tsv);
}

/* ---- Edge and random blocks ---- */

static uint64_t rng_state;
static uint32_t rnd(void) {
  rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
  return (uint32_t)(rng_state >> 32);
}

/* Writes the half bits h as block b's super-block scale. */
static void set_d(int t, uint8_t *b, uint16_t h) {
  if (t != IQ1_M) {
    b[0] = (uint8_t)h, b[1] = (uint8_t)(h >> 8);
    return;
  }
  for (int k = 0; k < 4; k++)
    b[49 + 2 * k] = (uint8_t)((b[49 + 2 * k] & 0x0F) | (h >> 4 * k & 15) << 4);
}

/* A Q8_K super-block with d = 1, codes in -63..63 (so ggml's integer block sum stays below 2^24
 * and converts to float exactly) and consistent bsums. */
static void make_q8_K(uint8_t *y) {
  block_q8_K b;
  b.d = 1.0f;
  for (int k = 0; k < QK_K; k++) b.qs[k] = (int8_t)((int)(rnd() % 127) - 63);
  for (int k = 0; k < QK_K / 16; k++) {
    int s = 0;
    for (int l = 0; l < 16; l++) s += b.qs[16 * k + l];
    b.bsums[k] = (int16_t)s;
  }
  memcpy(y, &b, sizeof b);
}

/* One super-block x (finite scale) against y from make_q8_K: every product and sum in ggml's dot is
 * exact except one rounding of (D * yd) * integer sum, so the result must be the model's exact
 * double sum rounded once to float. Also checks dequantize against the model bit for bit. */
static void check_block(int t, const uint8_t *x, const uint8_t *y, const char *what) {
  float dq[QK_K];
  CHECK(types[t].dq(x, dq, QK_K) == BQ_OK, "dequantize");
  const int finite = isfinite(block_d(t, x));
  block_q8_K yb;
  memcpy(&yb, y, sizeof yb);
  double sum = 0;
  int diff = 0;
  for (int e = 0; e < QK_K; e++) {
    const double m = model(t, x, e);
    sum += m * yb.qs[e];
    diff += bits((float)m) != bits(dq[e]);
  }
  float acc[LANES] = {0};
  CHECK(types[t].dot_q8_K(x, y, QK_K, acc) == BQ_OK, "dot");
  const float got = types[t].sum_q8_K(acc);
  if (finite) {
    CHECK(diff == 0, "%s %s: dequantize differs from the model in %d values", types[t].name, what,
          diff);
    CHECK(bits(got) == bits((float)sum) || (got == 0 && sum == 0), "%s %s: dot %a want %a",
          types[t].name, what, got, (float)sum);
  } else if (isinf(block_d(t, x))) {
    /* No grid value is 0 (nor grid + delta for IQ1), so an infinite scale gives all infinities. */
    int inf = 0;
    for (int e = 0; e < QK_K; e++) inf += isinf(dq[e]) != 0; /* glibc: -1 for -Inf */
    CHECK(inf == QK_K, "%s %s: %d of 256 infinite", types[t].name, what, inf);
  } else {
    int nan = 0;
    for (int e = 0; e < QK_K; e++) nan += isnan(dq[e]) != 0;
    CHECK(nan == QK_K && isnan(got), "%s %s: %d of 256 NaN, dot %g", types[t].name, what, nan, got);
  }
}

/* Scales at the edges of binary16 on blocks of seeded random codes: zero, -0, the smallest and
 * largest subnormals, the largest finite, +-Inf, quiet and signalling NaN. */
static void edge_blocks(void) {
  static const uint16_t ds[] = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xBC00,
                                0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01};
  uint8_t x[128], y[Q8K];
  rng_state = 0x2545F4914F6CDD1Du;
  for (int t = 0; t < NTYPES; t++)
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) {
      for (size_t k = 0; k < types[t].size; k++) x[k] = (uint8_t)rnd();
      set_d(t, x, ds[i]);
      make_q8_K(y);
      char what[48];
      snprintf(what, sizeof what, "d=0x%04x", ds[i]);
      check_block(t, x, y, what);
      if (ds[i] == 0 || ds[i] == 0x8000) {
        float dq[QK_K];
        types[t].dq(x, dq, QK_K);
        int zero = 0;
        for (int e = 0; e < QK_K; e++) zero += dq[e] == 0;
        CHECK(zero == QK_K, "%s zero scale: %d zeros", types[t].name, zero);
      }
    }
}

/* n not a multiple of 256: BQ_EINVAL and nothing written, for every kernel. */
static void bad_sizes(void) {
  uint8_t q[2 * 128] = {0}, y8[2 * Q8K] = {0};
  float v[2 * QK_K] = {0}, dq[2 * QK_K];
  for (int t = 0; t < NTYPES; t++)
    for (size_t bad = 1; bad < 2 * QK_K; bad += 37) {
      if (bad % QK_K == 0) continue;
      for (int k = 0; k < 2 * QK_K; k++) dq[k] = 7.0f;
      CHECK(types[t].dq(q, dq, bad) == BQ_EINVAL, "%s dequantize n=%zu", types[t].name, bad);
      int untouched = 1;
      for (int k = 0; k < 2 * QK_K; k++) untouched &= dq[k] == 7.0f;
      CHECK(untouched, "%s dequantize n=%zu wrote", types[t].name, bad);
      float a[LANES];
      for (int l = 0; l < LANES; l++) a[l] = 3.0f;
      CHECK(types[t].dot_f32(q, v, bad, a) == BQ_EINVAL, "%s dot f32 n=%zu", types[t].name, bad);
      CHECK(types[t].dot_q8_K(q, y8, bad, a) == BQ_EINVAL, "%s dot q8_K n=%zu", types[t].name, bad);
      untouched = 1;
      for (int l = 0; l < LANES; l++) untouched &= a[l] == 3.0f;
      CHECK(untouched, "%s dot n=%zu wrote", types[t].name, bad);
    }
  /* n = 0 is a whole number of blocks: nothing to do, nothing written. */
  for (int t = 0; t < NTYPES; t++) {
    float a[LANES] = {0};
    CHECK(types[t].dq(q, dq, 0) == BQ_OK && types[t].dot_q8_K(q, y8, 0, a) == BQ_OK &&
              types[t].dot_f32(q, v, 0, a) == BQ_OK && a[0] == 0,
          "%s n=0", types[t].name);
  }
}

/* Arbitrary bytes through every decoder and dot. Rounds with a finite scale are checked against
 * the model (check_block); every round, with any Q8_K bytes too (NaN/Inf d, any bsums), must run
 * clean under the sanitizers and give the same state whether fed whole or one super-block at a
 * time. Seeded; the seed is printed. */
static void random_blocks(void) {
  enum { RB = 6 };
  const uint64_t seed = 0x9E3779B97F4A7C15u;
  printf("random_blocks: seed %016llx\n", (unsigned long long)seed);
  rng_state = seed;
  uint8_t *a = malloc(RB * 128), *b = malloc(RB * Q8K), *y = malloc(Q8K);
  float *dq = malloc(RB * QK_K * 4), *v = malloc(RB * QK_K * 4);
  for (int round = 0; round < 400; round++) {
    for (int k = 0; k < RB * 128; k++) a[k] = (uint8_t)rnd();
    for (int k = 0; k < RB * Q8K; k++) b[k] = (uint8_t)rnd();
    for (int k = 0; k < RB * QK_K; k++) v[k] = (float)((int)(rnd() % 2001) - 1000) * 0.01f;
    for (int t = 0; t < NTYPES; t++) {
      const size_t ts = types[t].size;
      CHECK(types[t].dq(a, dq, RB * QK_K) == BQ_OK, "random dequantize");
      float acc[LANES] = {0}, acc1[LANES] = {0};
      CHECK(dot_pieces(types[t].dot_f32, a, ts, (const uint8_t *)v, 4 * QK_K, QK_K, RB * QK_K, acc,
                       acc1) == BQ_OK,
            "random dot f32");
      CHECK(!memcmp(acc, acc1, sizeof acc), "%s random dot f32 in pieces", types[t].name);
      memset(acc, 0, sizeof acc), memset(acc1, 0, sizeof acc1);
      CHECK(dot_pieces(types[t].dot_q8_K, a, ts, b, Q8K, QK_K, RB * QK_K, acc, acc1) == BQ_OK,
            "random dot q8_K");
      CHECK(!memcmp(acc, acc1, sizeof acc), "%s random dot q8_K in pieces", types[t].name);
      for (int k = 0; k < RB; k++) {
        uint8_t *x = a + k * ts;
        if (round % 2) set_d(t, x, (uint16_t)(rnd() % 0x7C00 | (rnd() & 0x8000)));
        make_q8_K(y);
        char what[48];
        snprintf(what, sizeof what, "round %d block %d", round, k);
        check_block(t, x, y, what);
      }
    }
  }
  free(a), free(b), free(y), free(dq), free(v);
}

int main(int argc, char **argv) {
  if (argc > 1) dir = argv[1];
  table_checksums();
  golden_codecs();
  golden_dots();
  edge_blocks();
  bad_sizes();
  random_blocks();
  return check_report("native golden IQ grid");
}
