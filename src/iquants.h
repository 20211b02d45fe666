/* The lattice ("grid") IQ formats IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M: the
 * grid and sign tables (src/ref/iq_grids.c) and the reference decoder and dot prototypes. The
 * block structs are in blocks.h; the quantizers, with their search tables, in src/imat/.
 *
 * A super-block holds QK_K = 256 elements in 8 sub-blocks of 32, each made of 4 groups of 8. A
 * group is one grid point (8 magnitudes, or 2 points of 4 for the IQ3 types) times a sign byte (bit
 * j set: element j negative) times the sub-block's (or half sub-block's) scale. The dots pair
 * with Q8_K (kquants.h). */
#ifndef BQ_IQUANTS_H
#define BQ_IQUANTS_H

#include "kquants.h"

/* ggml's tables (src/ref/iq_grids.c: provenance there). Grid entries pack their element values one
 * per byte, element j in bits 8j..8j+7. */
extern const uint8_t bq_kmask_iq2xs[8];    /* 1 << j */
extern const uint8_t bq_ksigns_iq2xs[128]; /* 7-bit sign index -> sign byte of even parity */
extern const uint64_t bq_iq2xxs_grid[256]; /* IQ2_XXS: 8 magnitudes in {8, 25, 43} */
extern const uint64_t bq_iq2xs_grid[512];  /* IQ2_XS: as above */
extern const uint64_t bq_iq2s_grid[1024];  /* IQ2_S: as above */
extern const uint32_t bq_iq3xxs_grid[256]; /* IQ3_XXS: 4 magnitudes in {4, 12, ..., 62} */
extern const uint32_t bq_iq3s_grid[512];   /* IQ3_S: 4 odd magnitudes 1..15 */
extern const uint64_t bq_iq1s_grid[2048];  /* IQ1_S, IQ1_M: 8 int8 values in {-1, 0, 1} */

/* Element j's value in a grid entry: unsigned for the magnitude grids, int8 for iq1s_grid. */
static inline int bq_grid_u8(uint64_t g, int j) { return (int)(g >> 8 * j & 0xFF); }
static inline int bq_grid_i8(uint64_t g, int j) { return (int8_t)(uint8_t)(g >> 8 * j); }

/* Element j's sign in a sign byte s, as ggml multiplies it in: -1 when bit j is set. */
static inline float bq_sign_f(uint8_t s, int j) { return s & bq_kmask_iq2xs[j] ? -1.0f : 1.0f; }
static inline int bq_sign_i(uint8_t s, int j) { return s & bq_kmask_iq2xs[j] ? -1 : 1; }

/* IQ2_XS and IQ2_S differ only in where a group's grid point and sign byte come from: both have
 * a 4-bit scale per half sub-block (the low and high nibble of scales[ib]). A block decoded to
 * them (a bq_iq2_decode function fills it from the block's bytes): dequantized as ggml does,
 * (D * (0.5f + s)) * 0.25f * grid byte * (+-1), and the dot of n elements with Q8_K, per
 * super-block an exact integer sum over half sub-blocks of (2s + 1) * sum(grid * sign * q8), then
 * sumf += (D * yd) * (float)bsum into acc[0] (src/ref/iq2_xs.c). */
typedef struct {
  uint64_t grid[32]; /* group 4ib + g's grid point */
  uint8_t sign[32];  /* and its sign byte */
  uint8_t scales[8];
  uint16_t d;
} bq_iq2_block;
typedef void bq_iq2_decode(const uint8_t *block, bq_iq2_block *k);
void bq_iq2_dequantize_block(const uint8_t *block, bq_iq2_decode *decode, float *y);
int bq_iq2_dot_q8_K(const void *x, size_t block_bytes, bq_iq2_decode *decode, const void *y,
                    size_t n, float *acc);

/* Kernel prototypes (until kernels.inc lists these types). Each returns BQ_OK, or BQ_EINVAL and
 * writes nothing when n is not a multiple of 256. The dots with Q8_K keep ggml's running float sum
 * in acc[0] and leave acc[1..] alone; the result is, as ggml's generic dot ends:
 *   IQ2_XXS, IQ2_XS, IQ2_S: 0.125f * acc[0]  (bq_<t>_dot_q8_K_sum__ref below)
 *   IQ3_XXS:                0.25f * acc[0]   (bq_iq3_xxs_dot_q8_K_sum__ref)
 *   IQ3_S, IQ1_S, IQ1_M:    acc[0]           (the left-to-right lane sum, bq_acc_sum__ref)
 * The dots with f32 add dequantized value times v, element by element, into acc[0]
 * (BQ_REF_ROW_KERNELS, kquants.h). */
#define BQ_IQGRID_PROTOS(t)      \
  BQ_DEQUANTIZE_PROTO(t, __ref); \
  BQ_DOT_PROTO(t, q8_K, __ref);  \
  BQ_DOT_PROTO(t, f32, __ref);
BQ_IQGRID_PROTOS(iq2_xxs)
BQ_IQGRID_PROTOS(iq2_xs)
BQ_IQGRID_PROTOS(iq2_s)
BQ_IQGRID_PROTOS(iq3_xxs)
BQ_IQGRID_PROTOS(iq3_s)
BQ_IQGRID_PROTOS(iq1_s)
BQ_IQGRID_PROTOS(iq1_m)
#undef BQ_IQGRID_PROTOS

/* The result of a <t>.q8_K dot state for the pairs whose ggml dot scales its sum at the end. */
float bq_iq2_xxs_dot_q8_K_sum__ref(const float *acc);
float bq_iq2_xs_dot_q8_K_sum__ref(const float *acc);
float bq_iq2_s_dot_q8_K_sum__ref(const float *acc);
float bq_iq3_xxs_dot_q8_K_sum__ref(const float *acc);

#endif
