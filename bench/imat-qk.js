#!/usr/bin/env node
// The quantizers of the simple blocks and the K-quants, kernel by kernel, against llama.cpp's own
// ggml_quantize_chunk (the oracle of tests/lib/ggml.js, native, one thread), side by side in one
// process pair on one CPU: rounds that alternate our kernel (raw exports of a build, warm) and the
// native call on the same rows, with and without an importance matrix; the median of the
// per-round ratios. Rows: ROWS x COLS synthetic weights (student-t, outlier columns) and a
// real-looking imatrix (tests/lib/rows.js).
//
//   node bench/imat-qk.js [type...]     BENCH_BACKEND=simd128|scalar  BENCH_VARIANT=__ref|__simd128
//                                       BENCH_ROUNDS (7)  BENCH_ROUND_MS (200)  BENCH_ROWS (32)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init, typeId } from '../js/index.js';
import { syntheticWeights } from '../demo/sample.js';
import { ORACLE, libDir } from '../tests/lib/ggml.js';
import { imatrix } from '../tests/lib/rows.js';
import { Raw } from '../tests/lib/raw.js';
import { repin, pinning } from './pin.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 32),
  COLS = 4096;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 200);
const BACKEND = process.env.BENCH_BACKEND ?? 'simd128';
const VARIANT = process.env.BENCH_VARIANT ?? '';
const TYPES =
  process.argv.length > 2
    ? process.argv.slice(2)
    : ['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K'];

// The test variant of the build (build/test/), which exports the __ref and __simd128 kernels too.
const module = readFileSync(new URL(`../build/test/blockquant-${BACKEND}.wasm`, import.meta.url));
const raw = new Raw((await init({ backend: BACKEND, module })).exports);
const x = syntheticWeights(ROWS, COLS, 11);
const w = imatrix(COLS, 0, 12);
const xp = raw.put(x),
  wp = raw.put(w),
  yp = raw.alloc(x.length * 2);

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

/** A long-lived oracle process on CPU cpu (-1: anywhere), answering one line per command. */
function startOracle(cpu) {
  const p = cpu >= 0 ? spawn('taskset', ['-c', String(cpu), ORACLE, libDir()]) : spawn(ORACLE, [libDir()]);
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
    /** @param {string} cmd @returns {Promise<string>} */
    ask: (cmd) =>
      new Promise((resolve, reject) => {
        waiting.push((line) => (line.startsWith('ok') ? resolve(line) : reject(new Error(`${cmd}: ${line}`))));
        p.stdin.write(cmd + '\n');
      }),
    close: () => p.stdin.end(),
  };
}

/** Weights per microsecond of one kernel call repeated for at least ms milliseconds. */
function ours(call, ms) {
  let calls = 0;
  const t0 = performance.now();
  let t1 = t0;
  do {
    call();
    calls++;
    t1 = performance.now();
  } while (t1 - t0 < ms);
  return (calls * x.length) / ((t1 - t0) * 1e3);
}

const where = repin();
const oracle = startOracle(cpuNow());
const med = (v) => [...v].sort((p, q) => p - q)[v.length >> 1];
console.log(
  `${ROWS}x${COLS}, ${BACKEND} build${VARIANT ? ` (${VARIANT})` : ''}, ${ROUNDS} rounds of ${ROUND_MS} ms; ${pinning}${where ? `, on ${where}` : ''}`,
);
for (const t of TYPES) {
  for (const withW of [false, true]) {
    const rowsKernel = raw.x[`bq_${t}_quantize_rows${VARIANT}`];
    const plain = raw.x[`bq_${t}_quantize${VARIANT}`];
    if (withW && !rowsKernel) continue;
    const call = withW
      ? () => rowsKernel(xp, yp, ROWS, COLS, wp)
      : rowsKernel
        ? () => rowsKernel(xp, yp, ROWS, COLS, 0)
        : () => plain(xp, yp, x.length);
    const cmd = `time ${typeId(t)} ${ROWS} ${COLS} ${join(dir, 'x.f32')}${withW ? ` ${join(dir, 'w.f32')}` : ''} ${ROUND_MS}`;
    ours(call, 100);
    await oracle.ask(cmd);
    const a = [],
      b = [],
      ratios = [];
    for (let r = 0; r < ROUNDS; r++) {
      const mine = ours(call, ROUND_MS);
      const [, secs] = (await oracle.ask(cmd)).split(' ');
      const native = x.length / (Number(secs) * 1e6);
      a.push(mine);
      b.push(native);
      ratios.push(mine / native);
    }
    console.log(
      `${t.padEnd(5)} ${withW ? 'imatrix   ' : 'no weights'}  ours ${med(a).toFixed(2).padStart(7)}  native ${med(b)
        .toFixed(2)
        .padStart(7)} weights/us  ${med(ratios).toFixed(2)}x`,
    );
  }
}
oracle.close();
rmSync(dir, { recursive: true, force: true });
