/* IQ1_S and IQ1_M SIMD128 quantizers: bit-exact with ../iq1.c, whose row, super-block and
 * sub-block steps they share; SIMD128 does the two searches.
 *
 * The split searches keep the reference's order of evaluation and of rounding. IQ1_M's sums run
 * one lane per shift choice k (the four accumulators of ggml's loop), each lane adding the same
 * products in the same element order; the sum over the elements below i1 is shared by every i2
 * and the one below i2 grows with i2 (the same additions in the same order, done once), and only
 * the part above i2 is added anew. IQ1_S's scores come from the running sums, four values of i2 at
 * a time. Candidates are then tested against the best so far, all lanes at once: while none
 * beats it the sequential scan would take none either (the best only changes when one does), and
 * when one does, that group of candidates is scanned in the reference's order.
 *
 * The neighbour search scores four neighbours at a time, one per lane, each lane summing its 8
 * squared errors in element order, and scans the four distances in list order. Only comparisons
 * see NaNs in these searches, so wasm's NaN bits do not matter there. */
#include "../iq1.h"

#include <float.h>
#include <wasm_simd128.h>

static void split_s(const float *sumx, const float *sumw, int *besti1, int *besti2, int *shift,
                    float *scale) {
  enum { N = BQ_IQ1S_BLOCK };
  const float *xp = bq_iq1_xp, *xm = bq_iq1_xm;
  const v128_t p0 = wasm_f32x4_splat(xp[0]), p1 = wasm_f32x4_splat(xp[1]),
               p2 = wasm_f32x4_splat(xp[2]), m0 = wasm_f32x4_splat(xm[0]),
               m1 = wasm_f32x4_splat(xm[1]), m2 = wasm_f32x4_splat(xm[2]);
  const v128_t zero = wasm_f32x4_splat(0), lane = wasm_i32x4_make(0, 1, 2, 3);
  const v128_t xN = wasm_f32x4_splat(sumx[N]), wN = wasm_f32x4_splat(sumw[N]);
  float best = -FLT_MAX;
  for (int i1 = 0; i1 <= N; i1++) {
    const v128_t a = wasm_f32x4_splat(sumx[i1] - sumx[0]),
                 aw = wasm_f32x4_splat(sumw[i1] - sumw[0]);
    const v128_t x1 = wasm_f32x4_splat(sumx[i1]), w1 = wasm_f32x4_splat(sumw[i1]);
    const v128_t pa = wasm_f32x4_mul(a, p0), ma = wasm_f32x4_mul(a, m0);
    const v128_t pa2 = wasm_f32x4_mul(wasm_f32x4_mul(aw, p0), p0),
                 ma2 = wasm_f32x4_mul(wasm_f32x4_mul(aw, m0), m0);
    for (int i2 = i1; i2 <= N; i2 += 4) {
      const v128_t sx = wasm_v128_load(sumx + i2), sw = wasm_v128_load(sumw + i2);
      const v128_t b = wasm_f32x4_sub(sx, x1), c = wasm_f32x4_sub(xN, sx);
      const v128_t bw = wasm_f32x4_sub(sw, w1), cw = wasm_f32x4_sub(wN, sw);
      /* sumqx = (a c0 + b c1) + c c2, sumq2 = ((aw c0) c0 + (bw c1) c1) + (cw c2) c2 */
      const v128_t pqx =
          wasm_f32x4_add(wasm_f32x4_add(pa, wasm_f32x4_mul(b, p1)), wasm_f32x4_mul(c, p2));
      const v128_t pq2 =
          wasm_f32x4_add(wasm_f32x4_add(pa2, wasm_f32x4_mul(wasm_f32x4_mul(bw, p1), p1)),
                         wasm_f32x4_mul(wasm_f32x4_mul(cw, p2), p2));
      const v128_t mqx =
          wasm_f32x4_add(wasm_f32x4_add(ma, wasm_f32x4_mul(b, m1)), wasm_f32x4_mul(c, m2));
      const v128_t mq2 =
          wasm_f32x4_add(wasm_f32x4_add(ma2, wasm_f32x4_mul(wasm_f32x4_mul(bw, m1), m1)),
                         wasm_f32x4_mul(wasm_f32x4_mul(cw, m2), m2));
      const v128_t vb = wasm_f32x4_splat(best);
      const v128_t valid = wasm_i32x4_le(lane, wasm_i32x4_splat(N - i2));
      const v128_t hit = wasm_v128_and(
          valid,
          wasm_v128_or(
              wasm_v128_and(wasm_f32x4_gt(pq2, zero),
                            wasm_f32x4_gt(wasm_f32x4_mul(pqx, pqx), wasm_f32x4_mul(vb, pq2))),
              wasm_v128_and(wasm_f32x4_gt(mq2, zero),
                            wasm_f32x4_gt(wasm_f32x4_mul(mqx, mqx), wasm_f32x4_mul(vb, mq2)))));
      if (!wasm_v128_any_true(hit)) continue;
      float qx[2][4], q2[2][4];
      wasm_v128_store(qx[0], pqx), wasm_v128_store(q2[0], pq2);
      wasm_v128_store(qx[1], mqx), wasm_v128_store(q2[1], mq2);
      for (int l = 0; l < 4 && i2 + l <= N; l++)
        for (int s = 0; s < 2; s++)
          if (q2[s][l] > 0 && qx[s][l] * qx[s][l] > best * q2[s][l]) {
            *scale = qx[s][l] / q2[s][l];
            best = *scale * qx[s][l];
            *besti1 = i1;
            *besti2 = i2 + l;
            *shift = s ? -1 : 1;
          }
    }
  }
}

static void split_m(const float *xb, const float *w, const int *perm, int *besti1, int *besti2,
                    int *bestk, float *scale) {
  enum { N = BQ_IQ1M_BLOCK };
  /* The terms of sorted element j in group p, lanes k: w c x and w c c, c the code value of
   * element perm[j] (its group of 8 shifted as k says: bit 1 for the first, bit 0 the second). */
  v128_t tx[3][N], tq[3][N];
  for (int j = 0; j < N; j++) {
    const int i = perm[j];
    for (int p = 0; p < 3; p++) {
      float c[4];
      for (int k = 0; k < 4; k++) c[k] = ((i < N / 2 ? k >> 1 : k & 1) ? bq_iq1_xm : bq_iq1_xp)[p];
      const v128_t cv = wasm_v128_load(c), wc = wasm_f32x4_mul(wasm_f32x4_splat(w[i]), cv);
      tx[p][j] = wasm_f32x4_mul(wc, wasm_f32x4_splat(xb[i]));
      tq[p][j] = wasm_f32x4_mul(wc, cv);
    }
  }
  const v128_t zero = wasm_f32x4_splat(0);
  float best = -FLT_MAX;
  v128_t px = zero, pq = zero; /* the sums over sorted elements below i1 */
  for (int i1 = 0; i1 <= N; i1++) {
    v128_t mx = px, mq = pq; /* and then those below i2 */
    for (int i2 = i1; i2 <= N; i2++) {
      v128_t sx = mx, sq = mq;
      for (int j = i2; j < N; j++) {
        sx = wasm_f32x4_add(sx, tx[2][j]);
        sq = wasm_f32x4_add(sq, tq[2][j]);
      }
      const v128_t hit = wasm_v128_and(
          wasm_f32x4_gt(sq, zero),
          wasm_f32x4_gt(wasm_f32x4_mul(sx, sx), wasm_f32x4_mul(wasm_f32x4_splat(best), sq)));
      if (wasm_v128_any_true(hit)) {
        float qx[4], q2[4];
        wasm_v128_store(qx, sx), wasm_v128_store(q2, sq);
        for (int k = 0; k < 4; k++)
          if (q2[k] > 0 && qx[k] * qx[k] > best * q2[k]) {
            *scale = qx[k] / q2[k];
            best = *scale * qx[k];
            *besti1 = i1;
            *besti2 = i2;
            *bestk = k;
          }
      }
      if (i2 < N) {
        mx = wasm_f32x4_add(mx, tx[1][i2]);
        mq = wasm_f32x4_add(mq, tq[1][i2]);
      }
    }
    if (i1 < N) {
      px = wasm_f32x4_add(px, tx[0][i1]);
      pq = wasm_f32x4_add(pq, tq[0][i1]);
    }
  }
}

/* Lane l of the result: byte 4 e + l of m, widened (a 0x00 / 0xFF byte mask to a lane mask). */
#define BQ_IQ1_WIDEN(m, e)                                                                         \
  wasm_i8x16_shuffle(m, m, 4 * (e), 4 * (e), 4 * (e), 4 * (e), 4 * (e) + 1, 4 * (e) + 1,           \
                     4 * (e) + 1, 4 * (e) + 1, 4 * (e) + 2, 4 * (e) + 2, 4 * (e) + 2, 4 * (e) + 2, \
                     4 * (e) + 3, 4 * (e) + 3, 4 * (e) + 3, 4 * (e) + 3)

static int search(const bq_iq2_tables *t, int u, const float *xval, const float *w, float s,
                  const float *xg, int8_t *L) {
  const uint16_t *nb = t->neighbours - t->map[u] - 1;
  const int n = nb[0];
  /* s xg[c] for the codes (grid bytes 1, 3, 5), as the reference computes them */
  const v128_t q0 = wasm_f32x4_splat(s * xg[0]), q1 = wasm_f32x4_splat(s * xg[1]),
               q2 = wasm_f32x4_splat(s * xg[2]);
  const v128_t one = wasm_i8x16_splat(1), three = wasm_i8x16_splat(3);
  v128_t xv[8], wv[8];
  for (int i = 0; i < 8; i++) xv[i] = wasm_f32x4_splat(xval[i]), wv[i] = wasm_f32x4_splat(w[i]);
  float best = FLT_MAX;
  int gi = -1;
  for (int j0 = 0; j0 < n; j0 += 4) {
    uint64_t g[4];
    for (int l = 0; l < 4; l++) g[l] = t->grid[nb[1 + (j0 + l < n ? j0 + l : n - 1)]];
    const v128_t a = wasm_v128_load(g), b = wasm_v128_load(g + 2);
    /* element e of neighbour l at byte 4 (e % 4) + l of lo (e < 4) or hi */
    const v128_t lo = wasm_i8x16_shuffle(a, b, 0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19,
                                         27),
                 hi = wasm_i8x16_shuffle(a, b, 4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15,
                                         23, 31);
    const v128_t lo0 = wasm_i8x16_eq(lo, one), lo1 = wasm_i8x16_eq(lo, three);
    const v128_t hi0 = wasm_i8x16_eq(hi, one), hi1 = wasm_i8x16_eq(hi, three);
    v128_t d2 = wasm_f32x4_splat(0);
#define BQ_IQ1_TERM(m0, m1, e, i)                                                              \
  do {                                                                                         \
    const v128_t q = wasm_v128_bitselect(q0, wasm_v128_bitselect(q1, q2, BQ_IQ1_WIDEN(m1, e)), \
                                         BQ_IQ1_WIDEN(m0, e));                                 \
    const v128_t diff = wasm_f32x4_sub(q, xv[i]);                                              \
    d2 = wasm_f32x4_add(d2, wasm_f32x4_mul(wasm_f32x4_mul(wv[i], diff), diff));                \
  } while (0)
    BQ_IQ1_TERM(lo0, lo1, 0, 0);
    BQ_IQ1_TERM(lo0, lo1, 1, 1);
    BQ_IQ1_TERM(lo0, lo1, 2, 2);
    BQ_IQ1_TERM(lo0, lo1, 3, 3);
    BQ_IQ1_TERM(hi0, hi1, 0, 4);
    BQ_IQ1_TERM(hi0, hi1, 1, 5);
    BQ_IQ1_TERM(hi0, hi1, 2, 6);
    BQ_IQ1_TERM(hi0, hi1, 3, 7);
#undef BQ_IQ1_TERM
    float d[4];
    wasm_v128_store(d, d2);
    for (int l = 0; l < 4 && j0 + l < n; l++)
      if (d[l] < best) {
        best = d[l];
        gi = nb[1 + j0 + l];
      }
  }
  if (gi < 0) return -1;
  for (int i = 0; i < 8; i++) L[i] = (int8_t)(((int)(t->grid[gi] >> 8 * i & 0xFF) - 1) / 2);
  return gi;
}
#undef BQ_IQ1_WIDEN

static const bq_iq1_kernels simd = {search, split_s, split_m};

BQ_QUANTIZE_ROWS_PROTO(iq1_s, __simd128) { return bq_iq1_s_rows(&simd, x, y, rows, cols, qw); }

BQ_QUANTIZE_ROWS_PROTO(iq1_m, __simd128) { return bq_iq1_m_rows(&simd, x, y, rows, cols, qw); }
