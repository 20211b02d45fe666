// Runs in headless Chromium (tests/relaxed.test.js, bench/relaxed.js), cross-origin isolated:
// init({ threads: 2 }) must run the relaxed threads build (bq.backend 'relaxed', 2 threads), and
// its 4096x4096 Q4_0 and Q4_K matvecs must equal one relaxed thread's (init({ backend: 'relaxed' }))
// bit for bit. ?bench=1 also times both in alternating rounds (median ms of each, and the ratio).
// The result goes to window.result.
import { init } from '../../js/index.js';

const params = new URLSearchParams(location.search);
const rows = 4096,
  cols = 4096;

async function main() {
  const one = await init({ backend: 'relaxed', layout: 'whole' });
  const bq = /** @type {any} */ (await init({ threads: 2 }));
  const out = {
    isolated: self.crossOriginIsolated,
    backend: bq.backend,
    threads: bq.threads,
    threadsError: bq.threadsError,
    types: /** @type {any} */ ({}),
  };
  // backend 'relaxed' asks for the same build on threads; 'simd128' for the SIMD128 threads build
  const asked = /** @type {any} */ (await init({ threads: 2, backend: 'relaxed' }));
  const simd = /** @type {any} */ (await init({ threads: 2, backend: 'simd128' }));
  out.asked = { backend: asked.backend, threads: asked.threads };
  out.simd128 = { backend: simd.backend, threads: simd.threads };
  await asked.close();
  await simd.close();
  let s = 7;
  const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  for (const t of ['q4_0', 'q4_K']) {
    const q = one.quantize(t, new Float32Array(rows * cols).map(rnd));
    const x = new Float32Array(cols).map(rnd);
    const W1 = one.tensor(t, q, rows, cols);
    const W2 = bq.tensor(t, q, rows, cols);
    const a = one.matvec(W1, x),
      b = await bq.matvec(W2, x);
    let diff = 0;
    for (let i = 0; i < rows; i++) if (!Object.is(a[i], b[i])) diff++;
    /** @type {any} */
    const r = { rowsDiffering: diff };
    if (params.get('bench')) {
      const t1 = [],
        t2 = [];
      const until = performance.now() + 1500; // warm-up by time (V8's baseline tier)
      while (performance.now() < until) {
        one.matvec(W1, x);
        await bq.matvec(W2, x);
      }
      for (let round = 0; round < 40; round++) {
        let t0 = performance.now();
        one.matvec(W1, x);
        t1.push(performance.now() - t0);
        t0 = performance.now();
        await bq.matvec(W2, x);
        t2.push(performance.now() - t0);
      }
      const med = (/** @type {number[]} */ v) => [...v].sort((p, q) => p - q)[v.length >> 1];
      r.oneMs = med(t1);
      r.twoMs = med(t2);
      r.ratio = r.oneMs / r.twoMs;
      r.minRatio = Math.min(...t1) / Math.min(...t2);
    }
    out.types[t] = r;
    W1.dispose();
    W2.dispose();
  }
  return out;
}

main().then(
  (r) => /** @type {any} */ (window.result = r),
  (e) => /** @type {any} */ (window.result = { error: String(e?.stack ?? e) }),
);
