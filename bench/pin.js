// Runs the benchmark on one CPU, the least contended one. On a VM whose virtual CPUs share
// physical cores with other tenants, vector code on a CPU whose sibling thread is busy runs 25-40%
// slower (scalar code less so), and which CPU is affected changes over time. A process left to the
// scheduler may also move between CPUs in the middle of a row. So each CPU gets a short probe (the
// SIMD128 Q4_1 dequantizer at the L2 size, median of 5 ms windows), and the benchmark re-runs
// itself pinned (taskset) to the CPU that probed fastest. BENCH_CPU=N pins to N without probing;
// without taskset, or with one CPU, the benchmark runs unpinned.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { init } from '../js/index.js';
import { Raw } from '../tests/lib/raw.js';
import { syntheticWeights } from '../demo/sample.js';

const PROBE_MS = 400;

/** Weights/ns of the probe kernel in this process: the median of 5 ms windows. */
async function probe() {
  const bq = await init({ backend: 'simd128' });
  const r = new Raw(bq.exports);
  const n = 65536;
  const qp = r.put(bq.quantize('q4_1', syntheticWeights(16, 4096, 3))),
    yp = r.alloc(n * 4);
  const f = r.x.bq_q4_1_dequantize;
  const rates = [];
  const end = performance.now() + PROBE_MS;
  for (let t0 = performance.now(); t0 < end; t0 = performance.now()) {
    let calls = 0,
      t = t0;
    do {
      f(qp, yp, n);
      calls++;
      t = performance.now();
    } while (t - t0 < 5);
    rates.push((calls * n) / ((t - t0) * 1e6));
  }
  rates.sort((a, b) => a - b);
  return rates[rates.length >> 1];
}

/**
 * Called first by bench.js with its own path. Returns when this process is the one to measure in
 * (pinned, or pinning is not possible); otherwise runs the pinned child and exits with its status.
 * @param {string} script
 */
export async function pinToQuietCpu(script) {
  if (process.argv.includes('--probe')) {
    console.log((await probe()).toFixed(3));
    process.exit(0);
  }
  if (process.env.BENCH_PINNED) return;
  const run = (cpu, args, opts = {}) =>
    spawnSync('taskset', ['-c', String(cpu), process.execPath, fileURLToPath(script), ...args], {
      encoding: 'utf8',
      ...opts,
    });
  let cpu = process.env.BENCH_CPU;
  if (cpu === undefined) {
    const cpus = availableParallelism();
    if (cpus < 2 || spawnSync('taskset', ['-V']).status !== 0) return;
    const speeds = [];
    for (let c = 0; c < cpus; c++) {
      const p = run(c, ['--probe']);
      speeds.push(p.status === 0 ? Number(p.stdout) : 0);
    }
    const best = speeds.indexOf(Math.max(...speeds));
    if (!(speeds[best] > 0)) return;
    cpu = String(best);
    console.log(
      `pinned to CPU ${cpu}; probe (SIMD128 Q4_1 dequantize, weights/ns) per CPU: ${speeds.map((s) => s.toFixed(2)).join(', ')}`,
    );
  } else console.log(`pinned to CPU ${cpu} (BENCH_CPU)`);
  const child = run(cpu, process.argv.slice(2), {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  });
  process.exit(child.status ?? 1);
}
