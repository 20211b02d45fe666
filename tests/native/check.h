/* A few lines of test harness for the native tests: count checks, report the first failures. */
#ifndef BQ_CHECK_H
#define BQ_CHECK_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long bq_checks, bq_failures;

#define CHECK(cond, ...)                                \
  do {                                                  \
    bq_checks++;                                        \
    if (!(cond)) {                                      \
      if (bq_failures++ < 20) {                         \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                   \
        fputc('\n', stderr);                            \
      }                                                 \
    }                                                   \
  } while (0)

/* The bytes of the fixture file rel under dir, NUL-terminated (so text files can be parsed in
 * place); a missing or unreadable fixture ends the test with status 2. The caller frees it. */
static inline void *bq_fixture(const char *dir, const char *rel, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "missing fixture %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = malloc(n + 1);
  if (!p || fread(p, 1, n, f) != (size_t)n) exit(2);
  fclose(f);
  p[n] = 0;
  *len = (size_t)n;
  return p;
}

/* The kernel signatures the golden tests call through their type tables (src/bq.h). */
typedef int (*quant_fn)(const float *, void *, size_t);
typedef int (*dequant_fn)(const void *, float *, size_t);
typedef int (*dot_fn)(const void *, const void *, size_t, float *);

/* The bits of a float, to compare values exactly (NaN payloads and -0 included). */
static inline uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* The result of a 16-lane dot state: the left-to-right sum of its lanes (bq_acc_sum__ref). */
static inline float acc_sum(const float *acc) {
  float s = acc[0];
  for (int l = 1; l < 16; l++) s += acc[l];
  return s;
}

/* A dot of n elements fed whole into acc, and again one block at a time into acc1 (blocks of bs
 * elements, xb bytes of x and yb bytes of y): returns the whole dot's status. */
static inline int dot_pieces(dot_fn dot, const uint8_t *x, size_t xb, const uint8_t *y, size_t yb,
                             size_t bs, size_t n, float *acc, float *acc1) {
  const int status = dot(x, y, n, acc);
  for (size_t b = 0; b < n / bs; b++) dot(x + b * xb, y + b * yb, bs, acc1);
  return status;
}

/* masks.tsv (the text of it): "file start end" lines, byte ranges of a golden q file that ggml
 * leaves unspecified. Whether byte k of qfile is in one. */
static inline int masked(const char *masks, const char *qfile, size_t k) {
  char name[128];
  unsigned a, b;
  int used;
  for (const char *p = masks; sscanf(p, "%127s %u %u%n", name, &a, &b, &used) == 3; p += used)
    if (!strcmp(name, qfile) && k >= a && k < b) return 1;
  return 0;
}

/* SHA-256 (FIPS 180-4) of a message, as 64 lowercase hex digits, for the table checksums. */
static inline uint32_t bq_ror(uint32_t x, int r) { return x >> r | x << (32 - r); }
static inline void sha256_hex(const uint8_t *msg, size_t len, char hex[65]) {
  static const uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
      0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
      0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
      0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
      0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
      0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
      0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const size_t total = (len + 9 + 63) / 64 * 64;
  uint8_t *m = calloc(total, 1);
  if (!m) exit(2);
  memcpy(m, msg, len);
  m[len] = 0x80;
  for (int i = 0; i < 8; i++) m[total - 1 - i] = (uint8_t)((uint64_t)len * 8 >> 8 * i);
  for (size_t off = 0; off < total; off += 64) {
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
      w[i] = (uint32_t)m[off + 4 * i] << 24 | (uint32_t)m[off + 4 * i + 1] << 16 |
             (uint32_t)m[off + 4 * i + 2] << 8 | m[off + 4 * i + 3];
    for (int i = 16; i < 64; i++) {
      const uint32_t s0 = bq_ror(w[i - 15], 7) ^ bq_ror(w[i - 15], 18) ^ w[i - 15] >> 3;
      const uint32_t s1 = bq_ror(w[i - 2], 17) ^ bq_ror(w[i - 2], 19) ^ w[i - 2] >> 10;
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int i = 0; i < 64; i++) {
      const uint32_t t1 = v[7] + (bq_ror(v[4], 6) ^ bq_ror(v[4], 11) ^ bq_ror(v[4], 25)) +
                          ((v[4] & v[5]) ^ (~v[4] & v[6])) + k[i] + w[i];
      const uint32_t t2 = (bq_ror(v[0], 2) ^ bq_ror(v[0], 13) ^ bq_ror(v[0], 22)) +
                          ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
      memmove(v + 1, v, 7 * sizeof *v);
      v[4] += t1;
      v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) h[i] += v[i];
  }
  free(m);
  for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", h[i]);
}

static int check_report(const char *name) {
  printf("%s: %ld checks, %ld failed\n", name, bq_checks, bq_failures);
  return bq_failures ? 1 : 0;
}
#endif
