/* NVFP4 reference: quantize_row_nvfp4_ref, dequantize_row_nvfp4, ggml_vec_dot_nvfp4_q8_0_generic.
 *
 * A block is four sub-blocks of 16 elements, each with its own UE4M3 scale byte: ue =
 * UE4M3(max |x| / 6) (bq_ue4m3_from_f32), d = its value halved (bq_ue4m3_half), and each element
 * the first E2M1 code nearest it (bq_fp4_best_code over MXFP4's doubled table). Sub-block s keeps
 * its 16 codes in qs[8s..8s+7]: element j < 8 in the low nibble of qs[8s + j], j + 8 in its high
 * nibble. NaN never wins the max scan and gives code 0; Inf makes the scale 0x7E (448 halved) and
 * itself takes code 0 (every code's error is Inf). Nothing a NaN computes reaches the bytes. */
#include "../iquants4.h"

enum { SUB = BQ_NVFP4_SUB, NSUB = BQ_BLK_nvfp4 / BQ_NVFP4_SUB };
static_assert(2 * BQ_BLK_q8_0 == BQ_BLK_nvfp4 && 2 * SUB == BQ_BLK_q8_0,
              "an NVFP4 block spans two Q8_0 blocks, two sub-blocks each");

BQ_QUANTIZE_PROTO(nvfp4, __ref) {
  if (n % BQ_BLK_nvfp4) return BQ_EINVAL;
  for (size_t i = 0; i < n / BQ_BLK_nvfp4; i++) {
    block_nvfp4 b;
    for (int s = 0; s < NSUB; s++) {
      const float *xs = x + i * BQ_BLK_nvfp4 + s * SUB;
      float amax = 0.0f;
      for (int j = 0; j < SUB; j++)
        if (amax < fabsf(xs[j])) amax = fabsf(xs[j]);
      b.d[s] = bq_ue4m3_from_f32(amax / 6.0f);
      const float d = bq_ue4m3_half(b.d[s]);
      for (int j = 0; j < SUB / 2; j++)
        b.qs[s * SUB / 2 + j] =
            (uint8_t)(bq_fp4_best_code(xs[j], d) | bq_fp4_best_code(xs[j + SUB / 2], d) << 4);
    }
    memcpy((uint8_t *)y + i * sizeof b, &b, sizeof b);
  }
  return BQ_OK;
}

static void dequantize_block(const uint8_t *p, float *y) {
  block_nvfp4 b;
  memcpy(&b, p, sizeof b);
  for (int s = 0; s < NSUB; s++, y += SUB) {
    const float d = bq_ue4m3_half(b.d[s]);
    for (int j = 0; j < SUB / 2; j++) {
      y[j] = (float)bq_kvalues_mxfp4[b.qs[s * SUB / 2 + j] & 0xF] * d;
      y[j + SUB / 2] = (float)bq_kvalues_mxfp4[b.qs[s * SUB / 2 + j] >> 4] * d;
    }
  }
}

BQ_REF_ROW_KERNELS(nvfp4, BQ_BLK_nvfp4)

/* Per sub-block (four per block, two per Q8_0 block): sumf += (dy * d) * (float)(integer sum),
 * one running sum in acc[0]. */
BQ_DOT_PROTO(nvfp4, q8_0, __ref) {
  if (n % BQ_BLK_nvfp4) return BQ_EINVAL;
  float sumf = acc[0];
  for (size_t i = 0; i < n / BQ_BLK_nvfp4; i++) {
    block_nvfp4 a;
    block_q8_0 b[2];
    memcpy(&a, (const uint8_t *)x + i * sizeof a, sizeof a);
    memcpy(b, (const uint8_t *)y + 2 * i * sizeof b[0], sizeof b);
    for (int s = 0; s < NSUB; s++) {
      const block_q8_0 *q = &b[s / 2];
      const int8_t *q8 = q->qs + (s % 2) * SUB;
      int sumi = 0;
      for (int j = 0; j < SUB / 2; j++) {
        const uint8_t c = a.qs[s * SUB / 2 + j];
        sumi += q8[j] * bq_kvalues_mxfp4[c & 0xF] + q8[j + SUB / 2] * bq_kvalues_mxfp4[c >> 4];
      }
      sumf += bq_h2f(q->d) * bq_ue4m3_half(a.d[s]) * (float)sumi;
    }
  }
  acc[0] = sumf;
  return BQ_OK;
}
