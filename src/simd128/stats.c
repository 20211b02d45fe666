/* SIMD128 block statistics: the shared error code over the SIMD128 quantizers and decoders. */
#include "../generic.h"

#define BQ_QUANTIZE(t, isa)
#define BQ_QUANTIZE_ROWS(t, isa)
#define BQ_DEQUANTIZE(t, isa)
#define BQ_DOT(t, t2, isa)
#define BQ_MATVEC(t, t2, isa)
#define BQ_STATS_SIMD(t) \
  BQ_DEFINE_STATS(t, __simd128, ) /* the best quantizer and decoder of the build */
#define BQ_STATS_REF(t)
#define BQ_STATS(t, isa) BQ_STATS_##isa(t)
#include "../kernels.inc"
