/* IQ3_XXS and IQ3_S SIMD128 quantizers: bit-exact with ../iq3.c. */
#include "../iq3.h"

void bq_iq3_simd_tables_build(int G, void *mem) {
  bq_iq3_tables t;
  t.grid = mem;
  t.map = (const int32_t *)(t.grid + G);
  t.neighbours = (const uint16_t *)(t.map + 4096);
  uint32_t *first = (uint32_t *)((uint8_t *)mem + BQ_IQ3_GGML_BYTES(G));
  float *q = (float *)(first + 4096);
  uint32_t g = 0;
  for (int u = 0; u < 4096; u++) {
    first[u] = 0;
    if (t.map[u] >= 0) continue;
    const uint16_t *nb = t.neighbours - t.map[u] - 1;
    first[u] = g;
    for (int j0 = 0; j0 < nb[0]; j0 += 4, g++)
      for (int lane = 0; lane < 4; lane++)
        for (int i = 0; i < 4; i++)
          q[16 * g + 4 * i + lane] =
              j0 + lane < nb[0] ? (float)(t.grid[nb[1 + j0 + lane]] >> 8 * i & 0xFF) : NAN;
  }
}
