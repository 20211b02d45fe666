#!/usr/bin/env node
// make bench: kernel throughput, measured side by side in one process kept on the least contended
// CPU (pin.js), warm (past V8's baseline tier). Prints a table of ratios and writes bench/out/latest.json:
// [{ op, type, impl, n, weightsPerNs }], impl in simd128 | scalar | js | ceiling | llama.cpp (peer.js,
// when ../shared/peers is there) | any other entry of EXTRAS.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { init, byteLength, CODEC_TYPES, GGMLType, typeInfo, typeId } from '../js/index.js';
import { blockFields, typeFlags, QUANTIZE_PLAIN } from '../js/types.js';
import { Raw } from '../tests/lib/raw.js';
import { jsDequantize } from './js-dequant.js';
import { syntheticWeights } from '../demo/sample.js';
import { repin, pinning } from './pin.js';
import { loadPeer, PEER } from './peer.js';

const SIZES = [65536, 16 * 1024 * 1024];
const COLS = 4096;
// The test variants of the builds (build/test/: the packaged modules' objects with every kernel
// exported), whose __simd128 names say which formats have SIMD kernels.
const testModule = (/** @type {string} */ b) =>
  readFileSync(new URL(`../build/test/blockquant-${b}.wasm`, import.meta.url));
const simd = await init({ backend: 'simd128', module: testModule('simd128') });
const scalar = await init({ backend: 'scalar', module: testModule('scalar') });
/** Whether the SIMD128 build has a SIMD kernel of its own for `name` (bq_q4_K_dequantize, ...):
 * the rows are the formats with one, since a reference kernel built twice measures nothing. */
const hasSimd = (name) => typeof (/** @type {any} */ (simd.exports)[`${name}__simd128`]) === 'function';
/** The formats the table knows, whose inputs our own quantizers can make. */
const TYPES = CODEC_TYPES.map((id) => typeInfo(id)).filter((t) => t.quantize);
/** The weight formats ggml quantizes only with an importance matrix (IQ2_XXS .. IQ1_M): their rows
 * time random blocks with normal scales (randomBlocks), which our quantizers cannot make. */
const DECODE_ONLY = CODEC_TYPES.map((id) => typeInfo(id)).filter((t) => !t.quantize && t.dot && t.blockSize > 1);
const WEIGHTS = [...TYPES, ...DECODE_ONLY];
/** ggml's vec_dot pairs of the integer types, from the type table. */
const PAIRS = WEIGHTS.filter((t) => t.dot && t.vecDot !== GGMLType.F32)
  .map((t) => [t.name, typeInfo(t.vecDot).name])
  .filter(([t, a]) => hasSimd(`bq_${t}_dot_${a}`));
/** The super-block (K) weight formats with a quantizer: Q2_K..Q6_K and the others paired with Q8_K. */
const K_WEIGHTS = PAIRS.filter(([t, a]) => a === 'q8_K' && (typeFlags(typeId(t)) & QUANTIZE_PLAIN) !== 0).map(
  ([t]) => t,
);
/** Importance weights for the weight formats ggml quantizes only with them (rows of 256). */
const IMATRIX_256 = new Float32Array(256).map((_, j) => 0.5 + ((j * 37) % 11) / 4);
/** The quantizers timed at every size, and those timed at the L2 size only (the K quantizers
 * search scales per sub-block and run far below memory speed, so the large size adds nothing). */
const QUANT = ['q8_0', 'q8_1', 'q4_0', 'q5_1', 'f16'];
const QUANT_L2 = [...K_WEIGHTS, 'q8_K'];
/** The fused f32 dots timed besides the vec_dot pairs. */
const F32_DOTS = ['q4_0', 'q8_0', ...K_WEIGHTS];
/** The weight formats (those with a vec_dot pair; f32's decode is a copy), float types last. */
const DEQUANT = [...WEIGHTS.filter((t) => t.dot && t.blockSize > 1), ...TYPES.filter((t) => t.dot && t.blockSize === 1)]
  .map((t) => t.name)
  .filter((t) => t !== 'f32' && hasSimd(`bq_${t}_dequantize`));
const WARM_MS = Number(process.env.BENCH_WARM_MS ?? 150);
const SAMPLE_MS = Number(process.env.BENCH_SAMPLE_MS ?? 25);
// Rounds: this VM runs in phases (a co-tenant slows the whole process by 25-35% for anything from
// tens of ms to several seconds, vector code more than scalar code), so each implementation is
// sampled in many short rounds and keeps its best, and the rounds of a row are spread over several
// passes through all the rows (all rows at the L2 size, the dequantize rows at the large size),
// so that each row meets more than one phase. The memory-bound dequantize rows at the large size
// meet the phases most (both the kernel and the ceiling wait on memory that other tenants share),
// so they get three times the rounds, over twice the passes.
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10);
const PASSES = Number(process.env.BENCH_PASSES ?? 5);
const BIG_SAMPLES = Number(process.env.BENCH_BIG_SAMPLES ?? 3 * SAMPLES);
const BIG_PASSES = Number(process.env.BENCH_BIG_PASSES ?? 2 * PASSES);
/** How the deferred rows of a size are timed: how many passes, and rounds in each. */
const planOf = (samples, passes) => ({ passes, perPass: Math.ceil(samples / passes) });
const L2_PLAN = planOf(SAMPLES, PASSES),
  BIG_PLAN = planOf(BIG_SAMPLES, BIG_PASSES);
/** The plan of the size being timed. */
let plan = L2_PLAN;
/** BENCH_OPS=dequantize,matvec times only those ops (for quick runs while tuning). */
const OPS = new Set((process.env.BENCH_OPS ?? 'dequantize,quantize,dot,matvec').split(','));
/** BENCH_TYPES=nvfp4,q1_0 times only the rows of those types (weights, or the quantized type). */
const ONLY = process.env.BENCH_TYPES ? new Set(process.env.BENCH_TYPES.split(',')) : null;
const picked = (/** @type {string} */ t) => !ONLY || ONLY.has(t);

// Inputs are quantized on an instance of their own: the codec API stages data at the scratch base
// that Raw allocates from, so quantizing through `simd` would overwrite the buffers of the rows
// that wait for their passes.
const prep = await init({ backend: 'simd128' });
const ceilingInst = await WebAssembly.instantiate(readFileSync(new URL('./out/ceiling.wasm', import.meta.url)));
const ceil = /** @type {any} */ (ceilingInst.instance.exports);
const raws = { simd128: new Raw(simd.exports), scalar: new Raw(scalar.exports) };

const warmed = new Set();
/**
 * A kernel to time: fn, a key saying whether it has been warmed up, and optionally `out`, which
 * reads what the last call wrote (the agreement checks compare it with ours).
 * @param {string} key @param {() => unknown} fn @param {() => Float32Array} [out]
 */
const measure = (key, fn, out) => ({ key, fn, out });

// llama.cpp's wasm kernels, when ../shared/peers (or BENCH_PEERS) has them: never required.
const peer = await loadPeer(
  process.env.BENCH_PEERS
    ? pathToFileURL(process.env.BENCH_PEERS.replace(/\/*$/, '/'))
    : new URL('../../shared/peers/', import.meta.url),
);
/**
 * Implementations timed beside ours, in the same alternating rounds: one entry each,
 * { impl, ratios, reset(), dequantize?(row), quantize?(row), dot?(row), matvec?(row) }. An op hook
 * gets the row ({ t, a, n, big, rows, x, q, w, v }: the row's type, activation type, weights,
 * matvec rows, f32 values, our quantized weights, activations) and returns a kernel to time
 * (measure, with `out` to have its results checked against ours) or undefined where it has none.
 * reset() frees what its hooks allocated (called where our arenas are reset); ratios lists the
 * [numerator, denominator] impl pairs the table prints for it.
 * @type {{ impl: string, ratios: string[][], reset: () => void, [op: string]: any }[]}
 */
const EXTRAS = [];
if (peer) {
  let sharedOut = 0; // the large dequantize rows share one output buffer, as ours do
  EXTRAS.push({
    impl: PEER,
    ratios: [['simd128', PEER]],
    reset() {
      peer.reset();
      sharedOut = 0;
    },
    dequantize({ t, n, big, q }) {
      if (!peer.has(`g_deq_${t}`)) return undefined;
      const f = peer.x[`g_deq_${t}`];
      const qp = peer.put(q),
        yp = big ? (sharedOut ||= peer.alloc(n * 4)) : peer.alloc(n * 4);
      return measure(
        `${PEER}dq${t}`,
        () => f(qp, yp, n),
        () => peer.floats(yp, n),
      );
    },
    // Only its Q8_K activation quantizer: its Q8_0/Q8_1 ones truncate, so they are other functions.
    quantize({ t, n, x }) {
      if (t !== 'q8_K') return undefined;
      const f = peer.x.g_quant_q8_K;
      const xp = peer.put(x),
        yp = peer.alloc(byteLength(t, n));
      const bytes = byteLength(t, n);
      return measure(
        `${PEER}q${t}`,
        () => f(xp, yp, n),
        () => new Float32Array(peer.bytes(yp, bytes).buffer),
      );
    },
    // llama.cpp's loop: ggml_vec_dot_<t>_<a> per row, on the same activation bytes as ours.
    matvec({ t, rows, w, v }) {
      if (!peer.has(`mv_${t}`)) return undefined;
      const f = peer.x[`mv_${t}`];
      const wp = peer.put(w),
        vp = peer.put(v),
        yp = peer.alloc(rows * 4);
      return measure(
        `${PEER}mv${t}`,
        () => f(COLS, rows, yp, wp, vp),
        () => peer.floats(yp, rows),
      );
    },
  });
}
// The public API on resident weights (bq.tensor, matvec(W, x)): its own instance, since the raw
// arenas write wherever the codec's staging and heap live. It quantizes x on every call, as a user's
// call does; the raw kernel rows are given activations quantized beforehand. Its target compares it
// with the same kernel called directly on the handle's own bytes, in the same instance (IN_PLACE):
// the raw simd128 row reads a copy of the weights in another instance's memory, and at 16M weights
// where each copy lands alone moved that ratio by up to +-12% between runs, far more than the
// 3-4.5 us a call costs.
const HANDLE = 'handle';
const IN_PLACE = 'in place';
const api = await init({ backend: 'simd128' });
/** @type {import('../js/index.js').Tensor[]} */
let handles = [];
/** The handle of the row being recorded, for the in-place kernel. @type {import('../js/index.js').Tensor | undefined} */
let rowHandle;
EXTRAS.push({
  impl: HANDLE,
  ratios: [[HANDLE, IN_PLACE], [HANDLE, 'simd128'], ...(peer ? [[HANDLE, PEER]] : [])],
  reset() {
    for (const h of handles) h.dispose();
    handles = [];
    rowHandle = undefined;
  },
  matvec({ t, rows, w, x }) {
    const W = api.tensor(t, w, rows, COLS);
    handles.push(W);
    rowHandle = W;
    const xv = x.subarray(0, COLS);
    const out = new Float32Array(rows);
    return measure(
      `${HANDLE}mv${t}`,
      () => api.matvec(W, xv, { out }),
      () => out.slice(),
    );
  },
});
// The raw kernel (bq_<t>_matvec_<a>) on the bytes of the handle just made, with its activations
// and output in a scratch block of the same heap (an f32 tensor used as memory).
EXTRAS.push({
  impl: IN_PLACE,
  ratios: [],
  reset() {},
  matvec({ t, a, rows, v }) {
    const W = rowHandle;
    if (!W) return undefined;
    const vBytes = Math.ceil(v.byteLength / 64) * 64,
      floats = vBytes / 4 + rows;
    const S = api.tensor('f32', new Uint8Array(floats * 4), 1, floats);
    handles.push(S);
    const k = /** @type {Record<string, any>} */ (api.exports);
    const vp = S.byteOffset,
      yp = vp + vBytes;
    new Uint8Array(k.memory.buffer, vp, v.byteLength).set(v);
    const f = k[`bq_${t}_matvec_${a}`];
    return measure(
      `${IN_PLACE}mv${t}${a}`,
      () => f(W.byteOffset, rows, COLS, vp, yp),
      () => new Float32Array(k.memory.buffer, yp, rows).slice(),
    );
  },
});
/**
 * The handle's target ratio, per pair at the large size: its speed over the in-place kernel's as
 * the median of PAIRED_CALLS ratios of single calls made back to back (in ABAB... order, the first
 * of each pair alternating), so that a slow phase of the host, which lasts from tens of ms to
 * seconds, falls on both calls of a pair. (Timed as the table's columns are, best of rounds, the
 * handle read 0.91x to 1.06x the kernel on its own bytes across the pairs of one run, for a call
 * overhead of 3-4.5 us in 1-3 ms.)
 * @type {Map<string, number>}
 */
const paired = new Map();
/** The same, the handle against llama.cpp's kernel (its own instance and copy of the bytes). @type {Map<string, number>} */
const pairedPeer = new Map();
const PAIRED_CALLS = Number(process.env.BENCH_PAIRED_CALLS ?? 201);
/** @param {() => unknown} a @param {() => unknown} b @returns {number} a's speed / b's */
function pairedRatio(a, b) {
  const r = [];
  const time = (/** @type {() => unknown} */ f) => {
    const t0 = performance.now();
    f();
    return performance.now() - t0;
  };
  for (let i = 0; i < PAIRED_CALLS; i++) {
    let ta, tb;
    if (i % 2) {
      tb = time(b);
      ta = time(a);
    } else {
      ta = time(a);
      tb = time(b);
    }
    r.push(tb / ta);
  }
  r.sort((p, q) => p - q);
  return r[r.length >> 1];
}

/** Adds the extras' kernels for a row. */
function recordExtras(op, type, row) {
  for (const e of EXTRAS) {
    const m = e[op]?.(row);
    if (m) record(op, type, e.impl, row.n, m);
  }
}

/** The implementations of one (op, type, n), timed together. */
let pending = [];
/** Where each pass ran (pin.js). */
const pins = [];
function pinFor(what) {
  const where = repin();
  if (where) pins.push(`${what}: ${where}`);
}
/** Rows whose rounds are spread over passes: { items, best }. */
const deferred = [];
const results = [];
function record(op, type, impl, n, m) {
  pending.push({ op, type, impl, n, ...m });
}

/**
 * Times the pending implementations side by side: each is warmed up by time once (past V8's
 * baseline tier), then all are sampled in turn for `rounds` rounds, each keeping its best time per
 * call, so a slow phase of the machine does not land on one implementation only.
 */
function sample(group, rounds) {
  for (let round = 0; round < rounds; round++) {
    group.items.forEach((p, i) => {
      let calls = 0;
      const t0 = performance.now();
      let t = t0;
      do {
        p.fn();
        calls++;
        t = performance.now();
      } while (t - t0 < SAMPLE_MS);
      group.best[i] = Math.min(group.best[i], ((t - t0) * 1e6) / calls);
    });
  }
}
function finish(group) {
  group.items.forEach((p, i) =>
    results.push({ op: p.op, type: p.type, impl: p.impl, n: p.n, weightsPerNs: p.n / group.best[i] }),
  );
}
/** Ends a row: warms its kernels and times it now; when `later`, its first pass is this one and
 * the others follow in runPasses. (The first pass right after the warm-up also gives the JS
 * baselines the state V8 compiles them into when they are called on their own, which is faster
 * than the state they may settle in once every row's closure has run.) */
function flush(later) {
  for (const p of pending) {
    if (warmed.has(p.key)) continue;
    const t0 = performance.now();
    while (performance.now() - t0 < WARM_MS) p.fn();
    warmed.add(p.key);
  }
  const group = { items: pending, best: pending.map(() => Infinity) };
  pending = [];
  sample(group, later ? plan.perPass : SAMPLES);
  if (later) deferred.push(group);
  else finish(group);
}
/** Times the deferred rows: the remaining passes through all of them. */
function runPasses() {
  for (let pass = 1; pass < plan.passes; pass++) {
    pinFor(`pass ${pass + 1}`);
    for (const g of deferred) sample(g, plan.perPass);
  }
  deferred.forEach(finish);
  deferred.length = 0;
}

function ceilingStore(n) {
  const base = ceil.ceiling_base(),
    bytes = n * 4;
  const mem = ceil.memory;
  if (mem.buffer.byteLength < base + bytes) mem.grow(Math.ceil((base + bytes - mem.buffer.byteLength) / 65536));
  return measure(`store${n}`, () => ceil.ceiling_store(base, bytes));
}
function ceilingLoad(bytes) {
  const base = ceil.ceiling_base();
  bytes = Math.ceil(bytes / 64) * 64;
  const mem = ceil.memory;
  if (mem.buffer.byteLength < base + bytes) mem.grow(Math.ceil((base + bytes - mem.buffer.byteLength) / 65536));
  return measure(`load${bytes}`, () => ceil.ceiling_load(base, bytes));
}

const weights = syntheticWeights(256, COLS, 7); // 1M values, tiled to the sizes below
function values(n) {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i += weights.length) x.set(weights.subarray(0, Math.min(weights.length, n - i)), i);
  return x;
}

/**
 * How closely each extra's results agree with ours (simd128), checked once per row before it is
 * timed, so that every ratio compares kernels that compute the same thing:
 * [{ what, ok, shown }]. Dequantized values must be equal bit for bit; a matvec row may differ by
 * MATVEC_TOL of its sum of |w_j * x_j| (both sum exact integer block products, then add the
 * blocks' float terms in their own orders).
 */
const agreements = [];
const MATVEC_TOL = 1e-5;
function checkAgreement(op, type, n, bound) {
  const ours = pending.find((p) => p.impl === 'simd128');
  const others = pending.filter((p) => p.out && p.impl !== 'simd128' && EXTRAS.some((e) => e.impl === p.impl));
  if (!ours?.out || !others.length) return;
  ours.fn();
  const a = ours.out();
  for (const p of others) {
    p.fn();
    const b = p.out();
    let ok = a.length === b.length,
      shown = '',
      worst;
    if (!bound) {
      const ua = new Uint32Array(a.buffer),
        ub = new Uint32Array(b.buffer);
      let diff = 0;
      for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) diff++;
      ok &&= diff === 0;
      shown = diff ? `${diff} of ${n} values differ` : 'bit for bit';
    } else {
      worst = 0;
      for (let r = 0; r < a.length; r++) {
        const e = Math.abs(a[r] - b[r]) / bound[r];
        worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
      }
      ok &&= worst <= MATVEC_TOL;
      shown = `max |diff| / sum|terms| ${worst.toExponential(1)}`;
    }
    agreements.push({ group: `${op} at ${n}: ${p.impl} = simd128`, type, ok, shown, worst });
  }
}
/** Per row of W (rows x COLS) and activations v: the sum of |w_j * x_j| over the decoded values. */
function sumAbsTerms(t, w, a, v, rows) {
  const wd = prep.dequantize(t, w),
    xd = prep.dequantize(a, v);
  const s = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let acc = 0;
    for (let j = 0, o = r * COLS; j < COLS; j++) acc += Math.abs(wd[o + j] * xd[j]);
    s[r] = acc;
  }
  return s;
}
/** Activation bytes the peer is fed must be ggml's reference bytes (its matvec rows use ours). */
function checkActivations(xv) {
  for (const a of ['q8_0', 'q8_1']) {
    if (!peer?.has(`g_ref_${a}`)) continue;
    const ours = prep.quantize(a, xv);
    const xp = peer.put(xv),
      yp = peer.alloc(ours.length);
    peer.x[`g_ref_${a}`](xp, yp, xv.length);
    const theirs = peer.bytes(yp, ours.length);
    const same = theirs.every((b, i) => b === ours[i]);
    agreements.push({
      group: `quantize (activations): ours = ggml's reference`,
      type: a,
      ok: same,
      shown: same ? 'byte for byte' : 'bytes differ',
    });
  }
}

/**
 * n elements of a decode-only type t as random bytes (seeded) with a normal fp16 scale in every
 * block (near 2^-7; IQ1_M's is spread over the top nibbles of its four u16 scales), so that every
 * decoded value and dot is finite.
 * @param {string} t @param {number} n
 */
function randomBlocks(t, n) {
  const { typeSize } = typeInfo(t);
  const q = new Uint8Array(byteLength(t, n));
  let seed = 0x2545f491;
  for (let i = 0; i < q.length; i++) q[i] = (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
  const dv = new DataView(q.buffer);
  const d = blockFields(t)?.find((f) => f.name === 'd');
  for (let o = 0; o < q.length; o += typeSize) {
    const h = 0x2000 | (q[o + 1] << 2);
    if (d) dv.setUint16(o + d.offset, h, true);
    else
      for (let k = 0; k < 4; k++) {
        const p = o + typeSize - 8 + 2 * k; // iq1_m: scales are the last 8 bytes
        dv.setUint16(p, (dv.getUint16(p, true) & 0x0fff) | (((h >> (4 * k)) & 15) << 12), true);
      }
  }
  return q;
}

for (const n of SIZES) {
  const x = values(n);
  // Each weight format's bytes, quantized once per size for all its rows (the K quantizers take
  // a second or more at the large size).
  const quantized = new Map();
  const quantize = (t) =>
    quantized.get(t) ??
    quantized
      .set(
        t,
        DECODE_ONLY.some((u) => u.name === t)
          ? randomBlocks(t, n)
          : typeInfo(t).requiresImatrix
            ? prep.quantize(t, x, { imatrix: IMATRIX_256 })
            : prep.quantize(t, x),
      )
      .get(t);
  // L2-size rows keep their buffers until the passes are over; at the large size only the
  // dequantize rows wait for passes (sharing one output buffer per implementation), and the other
  // rows are timed at once, each reusing the memory.
  const big = n !== SIZES[0];
  plan = big ? BIG_PLAN : L2_PLAN;
  const fresh = (r) => {
    if (big) r.reset();
  };
  const freshExtras = () => {
    if (big) for (const e of EXTRAS) e.reset();
  };
  for (const r of Object.values(raws)) r.reset();
  for (const e of EXTRAS) e.reset();
  pinFor(`${n} weights, pass 1`);
  const shared = {
    simd128: big ? raws.simd128.alloc(n * 4) : 0,
    scalar: big ? raws.scalar.alloc(n * 4) : 0,
    js: big ? new Float32Array(n) : null,
  };
  // dequantize
  for (const t of OPS.has('dequantize') ? DEQUANT.filter(picked) : []) {
    const q = quantize(t);
    for (const impl of ['simd128', 'scalar']) {
      const r = raws[impl];
      const qp = r.put(q),
        yp = big ? shared[impl] : r.alloc(n * 4);
      const f = r.x[`bq_${t}_dequantize`];
      record(
        'dequantize',
        t,
        impl,
        n,
        measure(
          `${impl}dq${t}`,
          () => f(qp, yp, n),
          () => r.floats(yp, n),
        ),
      );
    }
    const jf = /** @type {Record<string, (q: Uint8Array, y: Float32Array) => void>} */ (jsDequantize)[t];
    if (jf) {
      const y = shared.js ?? new Float32Array(n);
      record(
        'dequantize',
        t,
        'js',
        n,
        measure(`jsdq${t}`, () => jf(q, y)),
      );
    }
    record('dequantize', t, 'ceiling', n, ceilingStore(n));
    recordExtras('dequantize', t, { t, n, big, q });
    checkAgreement('dequantize', t, n);
    flush(true);
  }
  if (big) {
    runPasses();
    pinFor(`${n} weights, other rows`);
  }
  // quantize
  for (const t of OPS.has('quantize') ? (big ? QUANT : [...QUANT, ...QUANT_L2]).filter(picked) : []) {
    freshExtras();
    for (const impl of ['simd128', 'scalar']) {
      const r = raws[impl];
      fresh(r);
      const bytes = byteLength(t, n);
      const xp = r.put(x),
        yp = r.alloc(bytes);
      const f = r.x[`bq_${t}_quantize`];
      record(
        'quantize',
        t,
        impl,
        n,
        measure(
          `${impl}q${t}`,
          () => f(xp, yp, n),
          () => new Float32Array(r.bytes(yp, bytes).buffer),
        ),
      );
    }
    recordExtras('quantize', t, { t, n, big, x });
    checkAgreement('quantize', t, n);
    flush(!big);
  }
  // dot (vec_dot pairs, and the fused f32 dots)
  for (const [t, a] of OPS.has('dot')
    ? [...PAIRS, ...F32_DOTS.map((t) => [t, 'f32'])].filter(([t]) => picked(t))
    : []) {
    freshExtras();
    const w = quantize(t);
    const v = a === 'f32' ? x : quantize(a);
    for (const impl of ['simd128', 'scalar']) {
      const r = raws[impl];
      fresh(r);
      const wp = r.put(w),
        vp = r.put(v),
        acc = r.zeroAcc();
      const f = r.x[`bq_${t}_dot_${a}`];
      record(
        'dot',
        `${t}.${a}`,
        impl,
        n,
        measure(`${impl}dot${t}${a}`, () => f(wp, vp, n, acc)),
      );
    }
    record('dot', `${t}.${a}`, 'ceiling', n, ceilingLoad(w.length + v.byteLength));
    recordExtras('dot', `${t}.${a}`, { t, a, n, big, x, w, v });
    flush(!big);
  }
  // matvec: rows of 4096 columns, activations quantized once (what llama.cpp does)
  const rows = n / COLS;
  const xv = x.subarray(0, COLS);
  if (OPS.has('matvec') && !big) checkActivations(xv);
  for (const [t, a] of OPS.has('matvec') ? PAIRS.filter(([t]) => picked(t)) : []) {
    freshExtras();
    const w = quantize(t);
    const v = prep.quantize(a, xv);
    for (const impl of ['simd128', 'scalar']) {
      const r = raws[impl];
      fresh(r);
      const wp = r.put(w),
        vp = r.put(v),
        yp = r.alloc(rows * 4);
      const f = r.x[`bq_${t}_matvec_${a}`];
      record(
        'matvec',
        `${t}.${a}`,
        impl,
        n,
        measure(
          `${impl}mv${t}${a}`,
          () => f(wp, rows, COLS, vp, yp),
          () => r.floats(yp, rows),
        ),
      );
    }
    record('matvec', `${t}.${a}`, 'ceiling', n, ceilingLoad(w.length));
    recordExtras('matvec', `${t}.${a}`, { t, a, n, big, rows, x, w, v });
    if (EXTRAS.length) checkAgreement('matvec', `${t}.${a}`, n, sumAbsTerms(t, w, a, v, rows));
    const handle = pending.find((p) => p.impl === HANDLE),
      inPlace = pending.find((p) => p.impl === IN_PLACE),
      theirs = pending.find((p) => p.impl === PEER);
    flush(!big);
    if (big && handle && inPlace) paired.set(`${t}.${a}`, pairedRatio(handle.fn, inPlace.fn));
    if (big && handle && theirs) pairedPeer.set(`${t}.${a}`, pairedRatio(handle.fn, theirs.fn));
  }
  if (!big) runPasses();
}

mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
writeFileSync(new URL('./out/latest.json', import.meta.url), JSON.stringify(results, null, 1) + '\n');

// The table: one line per op, type and size; the rate of each implementation present in the run,
// then the ratios that matter (simd128 over each baseline, and the pairs the extras ask for).
const get = (op, type, impl, n) =>
  results.find((r) => r.op === op && r.type === type && r.impl === impl && r.n === n)?.weightsPerNs;
const present = new Set(results.map((r) => r.impl));
const impls = ['simd128', 'scalar', 'js', 'ceiling', ...EXTRAS.map((e) => e.impl)].filter((i) => present.has(i));
const ratios = [['simd128', 'scalar'], ['simd128', 'js'], ['simd128', 'ceiling'], ...EXTRAS.flatMap((e) => e.ratios)]
  .filter(([a, b]) => present.has(a) && present.has(b))
  .map(([a, b]) => ({ a, b, label: `${a === 'simd128' ? 'simd' : a}/${b}` }));
const fmt = (v) => (v === undefined ? '-' : v.toFixed(2));
const cols = [
  ...impls.map((i) => ({ label: i, cell: (/** @type {any} */ k) => fmt(get(k.op, k.type, i, k.n)) })),
  ...ratios.map(({ a, b, label }) => ({
    label,
    cell: (/** @type {any} */ k) => {
      const u = get(k.op, k.type, a, k.n),
        d = get(k.op, k.type, b, k.n);
      return u && d ? (u / d).toFixed(2) + 'x' : '-';
    },
  })),
];
const width = cols.map((c) => Math.max(7, c.label.length));
const lines = [
  `${'op'.padEnd(11)} ${'type'.padEnd(11)} ${'n'.padEnd(9)} ${cols.map((c, i) => c.label.padStart(width[i])).join('  ')}  (weights/ns)`,
];
for (const ks of new Set(results.map((r) => `${r.op}|${r.type}|${r.n}`))) {
  const [op, type, ns] = ks.split('|');
  const k = { op, type, n: Number(ns) };
  lines.push(
    `${op.padEnd(11)} ${type.padEnd(11)} ${ns.padEnd(9)} ${cols.map((c, i) => c.cell(k).padStart(width[i])).join('  ')}`,
  );
}
console.log(lines.join('\n'));
console.log(`\n${pinning}${pins.length ? ':\n  ' + pins.join('\n  ') : ''}`);
console.log(peer ? `${PEER}: ggml's wasm kernels from ../shared/peers` : `${PEER}: not present (no column)`);
console.log(`timed in ${(performance.now() / 1000).toFixed(0)} s`);

// The issue's targets, as ratios from this run (those whose rows were timed), and the agreement
// checks, which every comparison with an extra rests on.
const L2 = SIZES[0],
  BIG = SIZES[1];
/** @type {[string, number, number][]} [what, ratio, minimum] */
const checks = [];
const ratio = (op, type, a, b, n) => get(op, type, a, n) / get(op, type, b, n);
for (const [t, minCeil] of [
  ['q4_0', 0.8],
  ['q8_0', 0.8],
  ['q4_1', 0.7],
  ['q5_0', 0.7],
  ['q5_1', 0.7],
]) {
  checks.push([
    `dequantize ${t} simd128 >= ${minCeil}x ceiling at ${BIG}`,
    ratio('dequantize', t, 'simd128', 'ceiling', BIG),
    minCeil,
  ]);
  checks.push([`dequantize ${t} simd128 >= 5x scalar at ${L2}`, ratio('dequantize', t, 'simd128', 'scalar', L2), 5]);
  checks.push([`dequantize ${t} simd128 >= 8x js at ${L2}`, ratio('dequantize', t, 'simd128', 'js', L2), 8]);
}
for (const n of SIZES)
  checks.push([
    `matvec q4_0.q8_0 (${COLS} cols) simd128 >= 7x scalar at ${n}`,
    ratio('matvec', 'q4_0.q8_0', 'simd128', 'scalar', n),
    7,
  ]);
// Issue 13: the K-quant decoders at memory speed, and the K matvecs ahead of llama.cpp's kernels.
for (const t of ['q4_K', 'q6_K'])
  checks.push([
    `dequantize ${t} simd128 >= 0.8x ceiling at ${BIG}`,
    ratio('dequantize', t, 'simd128', 'ceiling', BIG),
    0.8,
  ]);
// At the large size (4096 x 4096, a model's layer): at 16 rows the once-per-call activation
// preparation, which llama.cpp's per-row loop does not have, is a large part of the call.
for (const t of K_WEIGHTS)
  checks.push([
    `matvec ${t}.q8_K (${COLS} cols) simd128 >= 1.3x ${PEER} at ${BIG}`,
    ratio('matvec', `${t}.q8_K`, 'simd128', PEER, BIG),
    1.3,
  ]);
// Issue 14: the IQ4 and MXFP4 decoders at memory speed, their matvecs well ahead of the scalar build.
for (const [t, a] of [
  ['iq4_nl', 'q8_0'],
  ['iq4_xs', 'q8_K'],
  ['mxfp4', 'q8_0'],
]) {
  checks.push([
    `dequantize ${t} simd128 >= 0.8x ceiling at ${BIG}`,
    ratio('dequantize', t, 'simd128', 'ceiling', BIG),
    0.8,
  ]);
  checks.push([
    `matvec ${t}.${a} (${COLS} cols) simd128 >= 8x scalar at ${BIG}`,
    ratio('matvec', `${t}.${a}`, 'simd128', 'scalar', BIG),
    8,
  ]);
}
// The newest types (NVFP4, Q1_0, Q2_0): their decoders at memory speed, their matvecs (ggml's float
// order, so equal to llama.cpp's to the bit) well ahead of llama.cpp's wasm, which runs ggml's
// generic C for them.
for (const t of ['nvfp4', 'q1_0', 'q2_0']) {
  checks.push([
    `dequantize ${t} simd128 >= 0.8x ceiling at ${BIG}`,
    ratio('dequantize', t, 'simd128', 'ceiling', BIG),
    0.8,
  ]);
  checks.push([
    `matvec ${t}.q8_0 (${COLS} cols) simd128 >= 3x ${PEER} at ${BIG}`,
    ratio('matvec', `${t}.q8_0`, 'simd128', PEER, BIG),
    3,
  ]);
}
// Issue 15: the resident-weight API keeps the raw kernel's speed (activations quantized per call),
// as paired calls against the kernel on the handle's own bytes (pairedRatio).
for (const [t, a] of PAIRS)
  checks.push([
    `matvec ${t}.${a} through a handle >= 0.97x the raw kernel on its bytes at ${BIG} (median of ${PAIRED_CALLS} paired calls)`,
    paired.get(`${t}.${a}`) ?? NaN,
    0.97,
  ]);
// ... and with it, the issue's lead over llama.cpp's wasm kernels through the API (when present).
for (const [t, a, min] of [
  ['q4_0', 'q8_0', 1.35],
  ['q4_1', 'q8_1', 1.35],
  ['q5_0', 'q8_0', 1.15],
  ['q5_1', 'q8_1', 1.15],
  ['q8_0', 'q8_0', 1.15],
])
  checks.push([
    `matvec ${t}.${a} through a handle >= ${min}x llama.cpp at ${BIG} (median of ${PAIRED_CALLS} paired calls)`,
    pairedPeer.get(`${t}.${a}`) ?? NaN,
    min,
  ]);
const timed = checks.filter((c) => !Number.isNaN(c[1]));
const lines2 = timed.map(([what, r, min]) => `  ${r >= min ? 'met   ' : 'MISSED'} ${what}: ${r.toFixed(2)}x`);
// One line per group of agreement checks (op and size), naming the types that failed.
const groups = new Map();
for (const a of agreements) groups.set(a.group, [...(groups.get(a.group) ?? []), a]);
for (const [group, as] of groups) {
  const bad = as.filter((a) => !a.ok);
  const worst = Math.max(...as.map((a) => a.worst ?? 0));
  const detail = bad.length
    ? bad.map((a) => `${a.type}: ${a.shown}`).join('; ')
    : as.some((a) => a.worst !== undefined)
      ? `max |diff| / sum|terms| ${worst.toExponential(1)} <= ${MATVEC_TOL.toExponential(0)}`
      : as[0].shown;
  const types = as.length > 3 ? `${as.length} types` : as.map((a) => a.type).join(', ');
  lines2.push(`  ${bad.length ? 'MISSED' : 'met   '} ${group} for ${types} (${detail})`);
}
const met =
  timed.filter(([, r, min]) => r >= min).length + [...groups.values()].filter((as) => as.every((a) => a.ok)).length;
const total = timed.length + groups.size;
console.log(`\ntargets: ${met === total ? `all ${total} met` : `${met} of ${total} met, ${total - met} MISSED`}`);
console.log(lines2.join('\n'));
