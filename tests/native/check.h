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

static int check_report(const char *name) {
  printf("%s: %ld checks, %ld failed\n", name, bq_checks, bq_failures);
  return bq_failures ? 1 : 0;
}
#endif
