/* Reference per-block error statistics. */
#include "../generic.h"

#define BQ_QUANTIZE(t, isa)
#define BQ_QUANTIZE_ROWS(t, isa)
#define BQ_DEQUANTIZE(t, isa)
#define BQ_DOT(t, t2, isa)
#define BQ_MATVEC(t, t2, isa)
#define BQ_STATS(t, isa) BQ_DEFINE_STATS(t, __ref, __ref)
#include "../kernels.inc"
