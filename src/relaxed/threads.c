/* Per-thread scratch for the relaxed threads build: the SIMD128 threads build's block (the
 * included file, its two functions renamed) followed by the relaxed matvec's prepared activations
 * (relaxed/matvec.c), each pointed at by the same _Thread_local scheme. */
#define bq_thread_scratch_bytes bq_thread_scratch_bytes__simd128
#define bq_thread_scratch_init bq_thread_scratch_init__simd128
#include "../simd128/threads.c"
#undef bq_thread_scratch_bytes
#undef bq_thread_scratch_init

extern _Thread_local uint8_t *bq_rprep_q;
extern _Thread_local float *bq_rprep_d, *bq_rprep_s;
extern _Thread_local int32_t *bq_rprep_sum;

typedef struct {
  bq_thread_block base;
  uint8_t rprep_q[(BQ_PREP_MAX_BLOCKS + 4) * BQ_B32] __attribute__((aligned(16)));
  float rprep_d[BQ_PREP_MAX_BLOCKS + 4], rprep_s[BQ_PREP_MAX_BLOCKS + 4];
  int32_t rprep_sum[BQ_PREP_MAX_BLOCKS + 4];
} bq_rthread_block;

/* Bytes of one thread's scratch block (to be placed 64-byte aligned). */
size_t bq_thread_scratch_bytes(void) { return sizeof(bq_rthread_block); }

/* As the SIMD128 build's: points the calling instance's scratch at the block p, after
 * __wasm_init_tls. */
void bq_thread_scratch_init(void *p) {
  bq_rthread_block *b = p;
  bq_thread_scratch_init__simd128(&b->base);
  bq_rprep_q = b->rprep_q;
  bq_rprep_d = b->rprep_d;
  bq_rprep_s = b->rprep_s;
  bq_rprep_sum = b->rprep_sum;
}
