/* Reference matrix-vector products and the reference dot-state sum. */
#include "../generic.h"

/* The reference kernels keep ggml's running float sum in acc[0] and, where ggml's generic dot has
 * more float state (the K-quants' eight sums), that state in acc[1..]; ggml adds it to the running
 * sum in order at the end, and so does this left-to-right sum of all lanes. Unused lanes are +0,
 * and acc[0] is never -0 (it starts at +0 and only has terms added), so adding them is exact. */
float bq_acc_sum__ref(const float *acc) {
  float s = acc[0];
  for (int i = 1; i < BQ_ACC_LANES; i++) s += acc[i];
  return s;
}

#define BQ_QUANTIZE(t, isa)
#define BQ_QUANTIZE_ROWS(t, isa)
#define BQ_DEQUANTIZE(t, isa)
#define BQ_STATS(t, isa)
#define BQ_DOT(t, t2, isa)
#define BQ_MATVEC(t, t2, isa) BQ_DEFINE_MATVEC(t, t2, __ref)
#include "../kernels.inc"
