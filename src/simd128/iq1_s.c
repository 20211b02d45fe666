/* IQ1_S SIMD128 dequantize, bit-exact with ref/iq1_s.c: per sub-block, four 8-byte grid rows
 * (index qs | 3 bits of qh) of values -1, 0, 1, plus a delta of +-1/8 for the whole sub-block,
 * times dl = d * (2s + 1) (iq.h, bq_iq1_store). */
#include "iq.h"

enum {
  XS = sizeof(block_iq1_s),
  XD = offsetof(block_iq1_s, d),
  XQS = offsetof(block_iq1_s, qs),
  XQH = offsetof(block_iq1_s, qh)
};

BQ_DEQUANTIZE_PROTO(iq1_s, __simd128) {
  if (n % QK_K) return BQ_EINVAL;
  const uint8_t *p = x;
  for (size_t i = 0; i < n / QK_K; i++, p += XS) {
    const float d = bq_h2f_fast(bq_rd16(p + XD));
    /* Not unrolled: each pass stores its 128 bytes in order (see kq45.h). */
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ib++, y += 32) {
      const uint8_t *a = p + XQS + 4 * ib;
      const uint32_t h = bq_rd16(p + XQH + 2 * ib);
      /* The reference's dl = d * (2s + 1), exactly times 2^-27 (2^-24 and the delta's 1/8). */
      const v128_t d27 = bq_iq_slot_splat(d * (float)(2 * (h >> 12 & 7) + 1) * 0x1p-27f);
      const v128_t e = wasm_i8x16_splat(h & 0x8000 ? -1 : 1);
      v128_t g0, g1;
      bq_iq_grid_rows(bq_iq1s_grid, a[0] | (h & 7) << 8, a[1] | (h >> 3 & 7) << 8,
                      a[2] | (h >> 6 & 7) << 8, a[3] | (h >> 9 & 7) << 8, &g0, &g1);
      bq_iq1_store(g0, g1, e, e, d27, d27, y);
    }
  }
  return BQ_OK;
}
