/* Per-thread scratch, for the threads build (js/threads.js: workers on one shared memory).
 *
 * Every array a kernel writes outside its arguments (the scale slots, the prepared matvec
 * activations) is reached through a _Thread_local pointer: consts.c, matvec.c, q8_K.c. Each
 * module instance on a shared memory has its own TLS block (wasm-ld's __wasm_init_tls) and stack
 * (__stack_pointer), both placed by the JS pool. The first instance's pointers are initialised to
 * the static arrays; a worker's are pointed by bq_thread_scratch_init at a block of its own, laid
 * out as below. The pointers rather than the arrays are thread-local so that the TLS segment (data
 * the module carries as bytes) stays a few words. Single-threaded builds (emcc without -pthread)
 * strip _Thread_local: the pointers are plain globals there. */
#include "kq236.h"
#include "kq45.h"

typedef struct {
  int16_t prep_q[(BQ_PREP_MAX_BLOCKS + 4) * BQ_B32];
  float prep_d[BQ_PREP_MAX_BLOCKS + 4], prep_s[BQ_PREP_MAX_BLOCKS + 4];
  int32_t prep_sum[BQ_PREP_MAX_BLOCKS + 4];
  int16_t kq_prep_q[BQ_KQ_PREP_MAX * QK_K];
  float kq_prep_d[BQ_KQ_PREP_MAX];
  kq_act kq236_prep[KQ_PREP_MAX];
  float kq_slot[32];
  uint32_t scale_slot[4];
} bq_thread_block;

/* Bytes of one thread's scratch block (to be placed 64-byte aligned). */
size_t bq_thread_scratch_bytes(void) { return sizeof(bq_thread_block); }

/* Points the calling instance's scratch at the block p (bq_thread_scratch_bytes bytes, 16-byte
 * aligned, owned by the caller for as long as the instance runs kernels); after
 * __wasm_init_tls. */
void bq_thread_scratch_init(void *p) {
  bq_thread_block *b = p;
  bq_prep_q = b->prep_q;
  bq_prep_d = b->prep_d;
  bq_prep_s = b->prep_s;
  bq_prep_sum = b->prep_sum;
  bq_kq_prep_q = b->kq_prep_q;
  bq_kq_prep_d = b->kq_prep_d;
  bq_kq236_prep = b->kq236_prep;
  bq_kq_slot = bq_kq_slot_alias = b->kq_slot;
  bq_scale_slot = bq_scale_slot_alias = b->scale_slot;
}
