/* Which build a module is, for the JS loader (js/loader.js reads it after instantiating a module,
 * instead of guessing from export names): the instruction set the kernels were compiled for, from
 * the compiler's own feature macros, and two flags. Compiled once per variant of each build (the
 * objects of the kernels are shared by both variants; only this one differs). */
#include <stdint.h>

#define BQ_BUILD_SCALAR 0u
#define BQ_BUILD_SIMD128 1u
#define BQ_BUILD_RELAXED 2u
#define BQ_BUILD_SHARED_MEMORY 0x100u /* the threads build: memory imported, shared by workers */
#define BQ_BUILD_TEST_EXPORTS \
  0x200u /* the test variant: every __ref/__simd128/__relaxed kernel exported */

uint32_t bq_build_info(void);

uint32_t bq_build_info(void) {
  uint32_t info;
#if defined(__wasm_relaxed_simd__)
  info = BQ_BUILD_RELAXED;
#elif defined(__wasm_simd128__)
  info = BQ_BUILD_SIMD128;
#else
  info = BQ_BUILD_SCALAR;
#endif
#if defined(__wasm_atomics__)
  info |= BQ_BUILD_SHARED_MEMORY;
#endif
#if defined(BQ_TEST_EXPORTS)
  info |= BQ_BUILD_TEST_EXPORTS;
#endif
  return info;
}
