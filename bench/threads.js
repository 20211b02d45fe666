// 4096x4096 Q4_0 matvec on resident weights: init({ threads: 2 }) against one thread (the simd128
// build, and the threads build's own main instance, to separate the build from the split).
// Alternating rounds after a warm-up by time; prints the median and the fastest call of each (the
// fastest: when no other process held a core). Usage: node bench/threads.js [threads]
import { init } from '../js/index-node.js';
import { pathToFileURL } from 'node:url';
import { loadPeer, PEER } from './peer.js';

const n = Number(process.argv[2] ?? 2);
const rows = 4096,
  cols = 4096;
const one = await init({ backend: 'simd128' });
const bq = /** @type {import('../js/threads.js').ThreadedCodec} */ (await init({ threads: n }));
if (bq.threads !== n) throw new Error(`threads unavailable here (got ${bq.threads})`);
let s = 1;
const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
const q = one.quantize('q4_0', new Float32Array(rows * cols).map(rnd));
const x = new Float32Array(cols).map(rnd);
const W1 = one.tensor('q4_0', q, rows, cols);
const Wt = bq.tensor('q4_0', q, rows, cols);
// the main instance of the threads build, one thread (synchronous kernel calls, as Codec makes them)
const k = /** @type {any} */ (bq.exports);
const S = bq.tensor('f32', new Uint8Array(cols * 4 + 8192 + rows * 4), 1, cols + 2048 + rows);
const xp = S.byteOffset,
  qp = xp + cols * 4,
  yp = qp + 8192;
new Float32Array(k.memory.buffer, xp, cols).set(x);
k.bq_q8_0_quantize(xp, qp, cols);

/** @type {Record<string, () => unknown>} */
const cases = {
  'simd128, 1 thread': () => one.matvec(W1, x),
  'threads build, main instance': () => k.bq_q4_0_matvec_q8_0(Wt.byteOffset, rows, cols, qp, yp),
  [`threads build, ${n} threads`]: () => bq.matvec(Wt, x),
};
// llama.cpp's wasm kernel (one thread, activations quantized beforehand), when ../shared/peers (or
// BENCH_PEERS) has it; its result is checked against ours before it is timed.
const peer = await loadPeer(
  process.env.BENCH_PEERS
    ? pathToFileURL(process.env.BENCH_PEERS.replace(/\/*$/, '/'))
    : new URL('../../shared/peers/', import.meta.url),
);
if (peer?.has('mv_q4_0')) {
  const wp = peer.put(q),
    vp = peer.put(one.quantize('q8_0', x)),
    py = peer.alloc(rows * 4);
  const f = peer.x.mv_q4_0;
  f(cols, rows, py, wp, vp);
  const ours = one.matvec(W1, x),
    theirs = peer.floats(py, rows);
  for (let r = 0; r < rows; r++)
    if (Math.abs(ours[r] - theirs[r]) > 1e-3 * (1 + Math.abs(ours[r])))
      throw new Error(`${PEER} mv_q4_0 row ${r}: ${theirs[r]}, ours ${ours[r]}`);
  cases[`${PEER}, 1 thread`] = () => f(cols, rows, py, wp, vp);
}
/** @param {() => unknown} f @param {number} ms */
async function warm(f, ms) {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) await f();
}
/** Times of single calls. @param {() => unknown} f @param {number} reps */
async function sample(f, reps) {
  const t = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await f();
    t.push(performance.now() - t0);
  }
  return t;
}
for (const f of Object.values(cases)) await warm(f, 1000); // past the baseline tier, in every isolate
/** @type {Record<string, number[]>} */
const times = Object.fromEntries(Object.keys(cases).map((c) => [c, []]));
// Alternating rounds, so that a busy moment of the machine falls on every case alike.
for (let r = 0; r < Number(process.env.BENCH_THREAD_ROUNDS ?? 40); r++)
  for (const [c, f] of Object.entries(cases)) times[c].push(...(await sample(f, 25)));
const sorted = (/** @type {number[]} */ a) => [...a].sort((p, q) => p - q);
const med = (/** @type {number[]} */ a) => sorted(a)[a.length >> 1];
const min = (/** @type {number[]} */ a) => sorted(a)[0];
const one1 = times['simd128, 1 thread'];
const them = times[`${PEER}, 1 thread`];
const vs = (/** @type {number[]} */ t, /** @type {(a: number[]) => number} */ f) =>
  them ? `  x${(f(them) / f(t)).toFixed(2)}` : '';
console.log(
  `${'case'.padEnd(32)} median ms (vs 1 thread${them ? `, vs ${PEER}` : ''})   min ms (vs 1 thread${them ? `, vs ${PEER}` : ''})`,
);
for (const [c, t] of Object.entries(times))
  console.log(
    `${c.padEnd(32)} ${med(t).toFixed(3)} (x${(med(one1) / med(t)).toFixed(2)}${vs(t, med)})       ${min(t).toFixed(3)} (x${(min(one1) / min(t)).toFixed(2)}${vs(t, min)})`,
  );
await bq.close();
