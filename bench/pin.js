// Keeps the benchmark on the least contended CPU. On a VM whose virtual CPUs share physical cores
// with other tenants, vector code on a CPU whose sibling thread is busy runs 25-40% slower (scalar
// code less so), and which CPU is affected changes over minutes; a process left to the scheduler
// may also move between CPUs in the middle of a row. So before each pass of the benchmark this
// process moves itself (taskset -a -p) to each CPU in turn, times a short probe there (the SIMD128
// Q4_1 dequantizer at the L2 size, on an instance of its own, median of 5 ms windows) and stays on
// the fastest. BENCH_CPU=N pins to N once, without probing; without taskset, or with one CPU, the
// benchmark runs unpinned.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { init } from '../js/index.js';
import { Raw } from '../tests/lib/raw.js';
import { syntheticWeights } from '../demo/sample.js';

const PROBE_MS = 150;
const N = 65536;

const bq = await init({ backend: 'simd128' });
const raw = new Raw(bq.exports);
const qp = raw.put(bq.quantize('q4_1', syntheticWeights(16, 4096, 3))),
  yp = raw.alloc(N * 4);
const probeKernel = raw.x.bq_q4_1_dequantize;

/** Weights/ns of the probe kernel where this process runs now. */
function probe() {
  const rates = [];
  const end = performance.now() + PROBE_MS;
  for (let t0 = performance.now(); t0 < end; t0 = performance.now()) {
    let calls = 0,
      t = t0;
    do {
      probeKernel(qp, yp, N);
      calls++;
      t = performance.now();
    } while (t - t0 < 5);
    rates.push((calls * N) / ((t - t0) * 1e6));
  }
  rates.sort((a, b) => a - b);
  return rates[rates.length >> 1];
}

/** Moves every thread of this process to `cpu`; false if that is not possible. */
function moveTo(cpu) {
  return spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)]).status === 0;
}

const fixed = process.env.BENCH_CPU;
const cpus = availableParallelism();
const usable = cpus > 1 && spawnSync('taskset', ['-V']).status === 0;
if (fixed !== undefined && !moveTo(fixed)) throw new Error(`BENCH_CPU=${fixed}: cannot pin (taskset)`);

/**
 * Moves this process to the CPU that probes fastest now and returns a short description
 * ("cpu 1 (9.8, 10.2)"), or undefined when the benchmark runs unpinned or on BENCH_CPU.
 */
export function repin() {
  if (fixed !== undefined || !usable) return undefined;
  const t0 = performance.now();
  while (performance.now() - t0 < 50) probeKernel(qp, yp, N); // warm (past V8's baseline tier)
  const speeds = [];
  for (let c = 0; c < cpus; c++) speeds.push(moveTo(c) ? probe() : 0);
  const best = speeds.indexOf(Math.max(...speeds));
  if (!(speeds[best] > 0) || !moveTo(best)) return undefined;
  return `cpu ${best} (${speeds.map((s) => s.toFixed(1)).join(', ')})`;
}

/** How the benchmark is pinned, for the header line. */
export const pinning =
  fixed !== undefined ? `pinned to CPU ${fixed} (BENCH_CPU)` : usable ? 'repinned before each pass' : 'unpinned';
