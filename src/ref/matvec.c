/* Reference matrix-vector products and the reference dot-state sum. */
#include "../generic.h"

/* The reference kernels keep one running float sum, in acc[0]. */
float bq_acc_sum__ref(const float *acc) { return acc[0]; }

#define BQ_QUANTIZE(t, isa)
#define BQ_DEQUANTIZE(t, isa)
#define BQ_STATS(t, isa)
#define BQ_DOT(t, t2, isa)
#define BQ_MATVEC(t, t2, isa) BQ_DEFINE_MATVEC(t, t2, __ref)
#include "../kernels.inc"
