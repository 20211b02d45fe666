#!/usr/bin/env node
// make bench: kernel throughput, measured side by side in one process kept on the least contended
// CPU (pin.js), warm (past V8's baseline tier). Prints a table of ratios and writes bench/out/latest.json:
// [{ op, type, impl, n, weightsPerNs }], impl in simd128 | scalar | js | ceiling.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { init, byteLength, CODEC_TYPES, GGMLType, typeInfo } from '../js/index.js';
import { Raw } from '../tests/lib/raw.js';
import { jsDequantize } from './js-dequant.js';
import { syntheticWeights } from '../demo/sample.js';
import { repin, pinning } from './pin.js';

const SIZES = [65536, 16 * 1024 * 1024];
const COLS = 4096;
const TYPES = CODEC_TYPES.map((id) => typeInfo(id));
/** ggml's vec_dot pairs of the integer types, from the type table. */
const PAIRS = TYPES.filter((t) => t.dot && t.vecDot !== GGMLType.F32).map((t) => [t.name, typeInfo(t.vecDot).name]);
/** The weight formats (those with a vec_dot pair; f32's decode is a copy), float types last. */
const DEQUANT = [...TYPES.filter((t) => t.dot && t.blockSize > 1), ...TYPES.filter((t) => t.dot && t.blockSize === 1)]
  .map((t) => t.name)
  .filter((t) => t !== 'f32');
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

const simd = await init({ backend: 'simd128' });
const scalar = await init({ backend: 'scalar' });
// Inputs are quantized on an instance of their own: the codec API stages data at the scratch base
// that Raw allocates from, so quantizing through `simd` would overwrite the buffers of the rows
// that wait for their passes.
const prep = await init({ backend: 'simd128' });
const ceilingInst = await WebAssembly.instantiate(readFileSync(new URL('./out/ceiling.wasm', import.meta.url)));
const ceil = /** @type {any} */ (ceilingInst.instance.exports);
const raws = { simd128: new Raw(simd.exports), scalar: new Raw(scalar.exports) };

const warmed = new Set();
/** A kernel to time: fn, and a key saying whether it has been warmed up. */
const measure = (key, fn) => ({ key, fn });

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

for (const n of SIZES) {
  const x = values(n);
  // L2-size rows keep their buffers until the passes are over; at the large size only the
  // dequantize rows wait for passes (sharing one output buffer per implementation), and the other
  // rows are timed at once, each reusing the memory.
  const big = n !== SIZES[0];
  plan = big ? BIG_PLAN : L2_PLAN;
  const fresh = (r) => {
    if (big) r.reset();
  };
  for (const r of Object.values(raws)) r.reset();
  pinFor(`${n} weights, pass 1`);
  const shared = {
    simd128: big ? raws.simd128.alloc(n * 4) : 0,
    scalar: big ? raws.scalar.alloc(n * 4) : 0,
    js: big ? new Float32Array(n) : null,
  };
  // dequantize
  for (const t of OPS.has('dequantize') ? DEQUANT : []) {
    const q = prep.quantize(t, x);
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
        measure(`${impl}dq${t}`, () => f(qp, yp, n)),
      );
    }
    const y = shared.js ?? new Float32Array(n);
    record(
      'dequantize',
      t,
      'js',
      n,
      measure(`jsdq${t}`, () => jsDequantize[t](q, y)),
    );
    record('dequantize', t, 'ceiling', n, ceilingStore(n));
    flush(true);
  }
  if (big) {
    runPasses();
    pinFor(`${n} weights, other rows`);
  }
  // quantize
  for (const t of OPS.has('quantize') ? ['q8_0', 'q8_1', 'q4_0', 'q5_1', 'f16'] : []) {
    for (const impl of ['simd128', 'scalar']) {
      const r = raws[impl];
      fresh(r);
      const xp = r.put(x),
        yp = r.alloc(byteLength(t, n));
      const f = r.x[`bq_${t}_quantize`];
      record(
        'quantize',
        t,
        impl,
        n,
        measure(`${impl}q${t}`, () => f(xp, yp, n)),
      );
    }
    flush(!big);
  }
  // dot (vec_dot pairs, and the fused f32 dots of two formats)
  for (const [t, a] of OPS.has('dot') ? [...PAIRS, ['q4_0', 'f32'], ['q8_0', 'f32']] : []) {
    const w = prep.quantize(t, x);
    const v = a === 'f32' ? x : prep.quantize(a, x);
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
    flush(!big);
  }
  // matvec: rows of 4096 columns, activations quantized once (what llama.cpp does)
  const rows = n / COLS;
  const xv = x.subarray(0, COLS);
  for (const [t, a] of OPS.has('matvec') ? PAIRS : []) {
    const w = prep.quantize(t, x);
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
        measure(`${impl}mv${t}${a}`, () => f(wp, rows, COLS, vp, yp)),
      );
    }
    record('matvec', `${t}.${a}`, 'ceiling', n, ceilingLoad(w.length));
    flush(!big);
  }
  if (!big) runPasses();
}

mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
writeFileSync(new URL('./out/latest.json', import.meta.url), JSON.stringify(results, null, 1) + '\n');

// The table: one line per op, type and size, throughput of each impl and the ratios that matter.
const get = (op, type, impl, n) =>
  results.find((r) => r.op === op && r.type === type && r.impl === impl && r.n === n)?.weightsPerNs;
const lines = [];
const fmt = (v) => (v === undefined ? '-' : v.toFixed(2));
lines.push(
  'op          type        n          simd128  scalar   js      ceiling  simd/scalar simd/js simd/ceiling  (weights/ns)',
);
const keys = [...new Set(results.map((r) => `${r.op}|${r.type}|${r.n}`))];
for (const k of keys) {
  const [op, type, ns] = k.split('|');
  const n = Number(ns);
  const s = get(op, type, 'simd128', n),
    c = get(op, type, 'scalar', n),
    j = get(op, type, 'js', n),
    m = get(op, type, 'ceiling', n);
  lines.push(
    `${op.padEnd(11)} ${type.padEnd(11)} ${String(n).padEnd(10)} ${fmt(s).padStart(7)}  ${fmt(c).padStart(7)}  ${fmt(j).padStart(6)}  ${fmt(m).padStart(7)}  ${(c ? (s / c).toFixed(2) + 'x' : '-').padStart(10)} ${(j ? (s / j).toFixed(2) + 'x' : '-').padStart(7)} ${(m ? (s / m).toFixed(2) + 'x' : '-').padStart(12)}`,
  );
}
console.log(lines.join('\n'));
console.log(`\n${pinning}${pins.length ? ':\n  ' + pins.join('\n  ') : ''}`);

// The targets, as ratios from this run.
const L2 = SIZES[0],
  BIG = SIZES[1];
const checks = [];
for (const [t, minCeil] of [
  ['q4_0', 0.8],
  ['q8_0', 0.8],
  ['q4_1', 0.7],
  ['q5_0', 0.7],
  ['q5_1', 0.7],
]) {
  checks.push([
    `dequantize ${t} simd128 >= ${minCeil}x ceiling at ${BIG}`,
    get('dequantize', t, 'simd128', BIG) / get('dequantize', t, 'ceiling', BIG),
    minCeil,
  ]);
  checks.push([
    `dequantize ${t} simd128 >= 5x scalar at ${L2}`,
    get('dequantize', t, 'simd128', L2) / get('dequantize', t, 'scalar', L2),
    5,
  ]);
  checks.push([
    `dequantize ${t} simd128 >= 8x js at ${L2}`,
    get('dequantize', t, 'simd128', L2) / get('dequantize', t, 'js', L2),
    8,
  ]);
}
for (const n of SIZES)
  checks.push([
    `matvec q4_0.q8_0 (${COLS} cols) simd128 >= 7x scalar at ${n}`,
    get('matvec', 'q4_0.q8_0', 'simd128', n) / get('matvec', 'q4_0.q8_0', 'scalar', n),
    7,
  ]);
console.log('\ntargets:');
for (const [what, ratio, min] of checks.filter((c) => !Number.isNaN(c[1])))
  console.log(`  ${ratio >= min ? 'met   ' : 'MISSED'} ${what}: ${ratio.toFixed(2)}x`);
