#!/usr/bin/env node
// make bench: the quantizers against llama.cpp's own ggml_quantize_chunk (the oracle of
// tests/lib/ggml.js: the prebuilt libggml-base.so of the devDependency, one native thread), side
// by side in one run: for each type, rounds that alternate our SIMD128 build (Node, one thread,
// warm) and the native code on the same rows, on the same CPU (pin.js), with and without an
// importance matrix where the type uses one; the median of the per-round ratios. Then the grid
// types' search tables: the time to build them in wasm against ggml_quantize_init's in a fresh
// native process. Prints a table and the targets (>= 1.0x native), and writes
// bench/out/quantize.json.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init, CODEC_TYPES, typeInfo } from '../js/index.js';
import { syntheticWeights } from '../demo/sample.js';
import { ORACLE, libDir, timeInit } from '../tests/lib/ggml.js';
import { imatrix } from '../tests/lib/rows.js';
import { repin, pinning } from './pin.js';

const ROWS = 16,
  COLS = 4096;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 250);
const ACTIVATIONS = new Set(['q8_1', 'q8_K']);

const bq = await init({ backend: 'simd128' });
// BENCH_TYPES=iq4_nl,iq3_s: only those types.
const ONLY = process.env.BENCH_TYPES ? new Set(process.env.BENCH_TYPES.split(',')) : null;
const TYPES = CODEC_TYPES.map((id) => ({ id, ...typeInfo(id) })).filter(
  (t) => t.quantize && t.blockSize > 1 && !ACTIVATIONS.has(t.name) && (!ONLY || ONLY.has(t.name)),
);
const x = syntheticWeights(ROWS, COLS, 11);
const w = imatrix(COLS, 0, 12);

const dir = mkdtempSync(join(tmpdir(), 'bq-bench-'));
writeFileSync(join(dir, 'x.f32'), new Uint8Array(x.buffer));
writeFileSync(join(dir, 'w.f32'), new Uint8Array(w.buffer));

/** The CPU this process runs on now (after repin), for the native process to use the same one. */
function cpuNow() {
  const r = spawnSync('taskset', ['-p', String(process.pid)]);
  const m = /affinity mask: ([0-9a-f]+)/.exec(String(r.stdout));
  const mask = m ? parseInt(m[1], 16) : 0;
  return mask && (mask & (mask - 1)) === 0 ? Math.log2(mask) : -1;
}

/** A long-lived oracle process, answering one line per command. */
function startOracle(cpu) {
  const args = [ORACLE, libDir()];
  const p = cpu >= 0 ? spawn('taskset', ['-c', String(cpu), ...args]) : spawn(args[0], args.slice(1));
  let buf = '';
  /** @type {((line: string) => void)[]} */
  const waiting = [];
  p.stdout.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\n')) >= 0;) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      waiting.shift()?.(line);
    }
  });
  return {
    /** @param {string} cmd */
    ask: (cmd) =>
      new Promise((resolve, reject) => {
        waiting.push((line) => (line.startsWith('ok') ? resolve(line) : reject(new Error(`${cmd}: ${line}`))));
        p.stdin.write(cmd + '\n');
      }),
    close: () => p.stdin.end(),
  };
}

/** Weights per microsecond of our quantize over at least ms milliseconds (after a warm-up). */
function ours(t, options, ms) {
  let calls = 0;
  const t0 = performance.now();
  let t1 = t0;
  do {
    bq.quantize(t.name, x, options);
    calls++;
    t1 = performance.now();
  } while (t1 - t0 < ms);
  return (calls * x.length) / ((t1 - t0) * 1e3);
}

const results = [];
console.log(
  `quantize ${ROWS}x${COLS} (synthetic weights, a real-looking imatrix), ${ROUNDS} rounds of ${ROUND_MS} ms; ${pinning}`,
);
const where = repin();
const cpu = cpuNow();
const oracle = startOracle(cpu);
if (where) console.log(`running on ${where}`);
for (const t of TYPES) {
  const modes = t.weighted ? (t.requiresImatrix ? [true] : [false, true]) : [false];
  for (const withW of modes) {
    const options = withW ? { imatrix: w } : { rowLength: COLS };
    bq.prepareQuantize(t.id);
    ours(t, options, 100); // warm: past V8's baseline tier
    const cmd = `time ${t.id} ${ROWS} ${COLS} ${join(dir, 'x.f32')}${withW ? ` ${join(dir, 'w.f32')}` : ''} ${ROUND_MS}`;
    await oracle.ask(cmd); // native warm-up (tables built, caches)
    const ratios = [],
      a = [],
      b = [];
    for (let r = 0; r < ROUNDS; r++) {
      const mine = ours(t, options, ROUND_MS);
      const [, secs] = (await oracle.ask(cmd)).split(' ');
      const native = x.length / (Number(secs) * 1e6);
      a.push(mine);
      b.push(native);
      ratios.push(mine / native);
    }
    const med = (v) => [...v].sort((p, q) => p - q)[v.length >> 1];
    const row = { type: t.name, imatrix: withW, simd128: med(a), native: med(b), ratio: med(ratios) };
    results.push(row);
    console.log(
      `${t.name.padEnd(8)} ${withW ? 'imatrix   ' : 'no weights'}  simd128 ${row.simd128.toFixed(2).padStart(7)}` +
        `  native ${row.native.toFixed(2).padStart(7)} weights/us   ${row.ratio.toFixed(2)}x`,
    );
  }
}
oracle.close();

// The grid tables: build time in wasm (a fresh codec each time) against ggml_quantize_init in a
// fresh native process.
const tables = [];
for (const t of TYPES.filter((t) => bq.exports.bq_quant_tables_bytes(t.id) > 0)) {
  if (t.name === 'iq1_m') continue; // IQ1_S's tables
  const c = await init({ backend: 'simd128' });
  const t0 = performance.now();
  const bytes = c.prepareQuantize(t.id);
  const ms = performance.now() - t0;
  const native = timeInit(t.id) * 1e3;
  tables.push({ type: t.name, ms, native, bytes, ratio: native / ms });
  console.log(
    `tables ${t.name.padEnd(8)} ${ms.toFixed(1).padStart(8)} ms in wasm, ${native.toFixed(1).padStart(8)} ms native ` +
      `(${(native / ms).toFixed(2)}x faster), ${(bytes / 1048576).toFixed(2)} MB`,
  );
}
rmSync(dir, { recursive: true, force: true });
mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
writeFileSync(new URL('./out/quantize.json', import.meta.url), JSON.stringify({ results, tables }, null, 1) + '\n');

const lines = [
  ...results.map((r) => [
    `quantize ${r.type}${r.imatrix ? ' with an imatrix' : ''} simd128 >= 1.0x native ggml`,
    r.ratio,
  ]),
  ...tables.map((r) => [`search tables of ${r.type} built faster than ggml's native init`, r.ratio]),
];
const met = lines.filter(([, r]) => r >= 1).length;
console.log(`\nquantize targets: ${met === lines.length ? `all ${met} met` : `${met} of ${lines.length} met`}`);
for (const [what, r] of lines) console.log(`  ${r >= 1 ? 'met   ' : 'MISSED'} ${what}: ${r.toFixed(2)}x`);
