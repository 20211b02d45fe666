/* A few lines of test harness for the native tests: count checks, report the first failures. */
#ifndef BQ_CHECK_H
#define BQ_CHECK_H
#include <stdio.h>
#include <stdlib.h>

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

static int check_report(const char *name) {
  printf("%s: %ld checks, %ld failed\n", name, bq_checks, bq_failures);
  return bq_failures ? 1 : 0;
}
#endif
