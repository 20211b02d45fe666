// init({ threads }) (js/index-node.js with js/threads.js, js/threads-node.js): matvec, matvecs, dequantize and quantize
// split over workers on one shared memory equal the one-thread SIMD128 codec bit for bit; the
// one-thread fallback; closing the pool; a worker's failure as a rejection, not a hang.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { CODEC_TYPES, typeInfo, byteLength, init } from '../js/index-node.js';
import { spawnNode, threadsModuleFile } from '../js/threads-node.js';
import { initThreads, threadsUnsupported } from '../js/threads.js';
import { Pool } from '../js/pool.js';
import { CTL, run as runKernel } from '../js/worker-core.js';
import { SEED, firstDiff, rng, quantizeAny } from './lib/helpers.js';

// The threads build has the SIMD128 kernels: the one-thread reference is the simd128 build.
const one = await init({ backend: 'simd128' });
const MATVEC = CODEC_TYPES.filter((t) => typeInfo(t).matvec).map((t) => typeInfo(t).name);
const QUANT = CODEC_TYPES.filter((t) => typeInfo(t).quantize).map((t) => typeInfo(t).name);
console.log(`# threads test, seed ${SEED}`);

/** @param {ArrayLike<number>} a @param {ArrayLike<number>} b @param {string} what */
function same(a, b, what) {
  const i = firstDiff(a, b);
  assert.equal(i, -1, `${what}: first difference at ${i} (${a[i]} vs ${b[i]}), seed ${SEED}`);
}

/** Weights of a type (quantized from gaussian values, or random finite blocks) and x. */
function problem(type, rows, cols, seed) {
  const r = rng(seed);
  const info = typeInfo(type);
  const w = new Float32Array(rows * cols).map(() => r.normal());
  let bytes;
  if (info.quantize) bytes = quantizeAny(one, type, w, cols);
  else {
    // Types without a quantizer: dequantize-safe blocks made by re-quantizing is impossible, so
    // random bytes with the scale f16 set small and finite (every such type starts with one).
    bytes = new Uint8Array(byteLength(info.id ?? type, rows * cols)).map(() => (r.next() * 256) | 0);
    for (let o = 0; o < bytes.length; o += info.typeSize) bytes[o + 1] = 0x30;
  }
  return { bytes, x: new Float32Array(cols).map(() => r.normal() * 3) };
}

/**
 * A pool of exactly n threads, past the host's parallelism too (init caps n at it; these tests
 * need 3 threads on a 2-core host to split work unevenly).
 * @param {number} n @param {import('../js/threads.js').ThreadOptions} [o]
 */
const pool = (n, o = {}) =>
  initThreads(n, {
    module: threadsModuleFile,
    spawn: spawnNode,
    single: () => init({ backend: 'simd128' }),
    parallelism: n,
    ...o,
  });

for (const n of [2, 3]) {
  test(`threads ${n}: matvec on handles and bytes equals one thread for every matvec type`, async () => {
    const bq = /** @type {any} */ (await pool(n, { minSplitBytes: 0 }));
    try {
      assert.equal(bq.threads, n);
      assert.equal(bq.workers, n - 1, 'the calling thread is one of the n threads');
      let seed = SEED;
      for (const t of MATVEC) {
        const b = Math.max(typeInfo(t).blockSize, 32);
        // rows below, at and above the thread count; columns past the prepared-activation limits
        for (const [rows, cols] of [
          [1, b],
          [n, 3 * b],
          [7 * n + 1, b === 256 ? 768 : 4096],
          [5, b === 256 ? 513 * 256 : Math.ceil((4097 * 32) / b) * b],
        ]) {
          const { bytes, x } = problem(t, rows, cols, seed++);
          for (const exact of [false, true]) {
            const want = one.matvec(t, bytes, rows, x, { exact });
            const before = bq.rounds;
            same(await bq.matvec(t, bytes, rows, x, { exact }), want, `${t} ${rows}x${cols} bytes exact=${exact}`);
            const W = bq.tensor(t, bytes, rows, cols);
            same(await bq.matvec(W, x, { exact }), want, `${t} ${rows}x${cols} handle exact=${exact}`);
            assert.equal(bq.rounds, before + 2, 'both calls ran on the workers');
            W.dispose();
          }
        }
      }
    } finally {
      await bq.close();
    }
  });

  test(`threads ${n}: matvecs over mixed types, dequantize and quantize of large inputs equal one thread`, async () => {
    // A small round, so that large inputs take several rounds.
    const bq = /** @type {any} */ (await pool(n, { roundBytes: 1 << 20 }));
    try {
      const cols = 4096;
      const types = ['q4_0', 'q8_0', 'q4_K', 'q6_K', 'f16', 'iq4_xs'].filter((t) => MATVEC.includes(t));
      const ps = types.map((t, i) => problem(t, 97 + i, cols, SEED + 100 + i));
      const Ws = ps.map((p, i) => bq.tensor(types[i], p.bytes, 97 + i, cols));
      const ys = await bq.matvecs(Ws, ps[0].x);
      ys.forEach((y, i) => same(y, one.matvec(types[i], ps[i].bytes, 97 + i, ps[0].x), `matvecs ${types[i]}`));
      for (const W of Ws) W.dispose();
      const r = rng(SEED + 7);
      for (const t of QUANT) {
        const bs = typeInfo(t).blockSize;
        const v = new Float32Array(Math.max(bs, 32) * 12347).map(() => r.normal() * 5);
        // (the types that need an importance matrix: rows of one block, one weight per column)
        const q = await quantizeAny(bq, t, v, Math.max(bs, 32));
        same(q, quantizeAny(one, t, v, Math.max(bs, 32)), `quantize ${t}`);
        same(await bq.dequantize(t, q), one.dequantize(t, q), `dequantize ${t}`);
        const W = bq.tensor(t, q, 1, v.length);
        same(await bq.dequantize(W), one.dequantize(t, q), `dequantize(W) ${t}`);
        W.dispose();
      }
      assert.ok(bq.rounds > 3 * QUANT.length, `large inputs ran in several rounds (${bq.rounds})`);
    } finally {
      await bq.close();
    }
  });
}

test('concurrent calls run in call order and each gets its own result', async () => {
  const bq = await init({ threads: 2, minSplitBytes: 0 });
  try {
    const ps = [0, 1, 2, 3].map((i) => problem('q4_0', 64, 1024, SEED + 50 + i));
    const got = await Promise.all(ps.map((p) => bq.matvec('q4_0', p.bytes, 64, p.x)));
    got.forEach((y, i) => same(y, one.matvec('q4_0', ps[i].bytes, 64, ps[i].x), `call ${i}`));
  } finally {
    await bq.close();
  }
});

test('many small rounds in a row, more workers than chunks: every call settles with its own result', async () => {
  // Workers that find nothing left to claim finish before the main thread waits; their wakes
  // must not be taken for the next round's.
  const bq = /** @type {any} */ (await pool(3, { minSplitBytes: 0 }));
  try {
    const ps = [0, 1].map((i) => problem('q8_0', 2, 32, SEED + 60 + i));
    const want = ps.map((p) => one.matvec('q8_0', p.bytes, 2, p.x));
    const Ws = ps.map((p) => bq.tensor('q8_0', p.bytes, 2, 32));
    for (let i = 0; i < 3000; i++) same(await bq.matvec(Ws[i & 1], ps[i & 1].x), want[i & 1], `round ${i}`);
  } finally {
    await bq.close();
  }
});

test('errors: bad arguments reject, a disposed or foreign handle is refused', async () => {
  const bq = await init({ threads: 2 });
  try {
    await assert.rejects(bq.matvec('q4_0', new Uint8Array(18), 2, new Float32Array(32)), RangeError);
    await assert.rejects(bq.quantize('q4_0', new Float32Array(31)), RangeError);
    await assert.rejects(bq.dequantize('q4_0', new Uint8Array(17)), RangeError);
    const W = bq.tensor('q4_0', new Uint8Array(18 * 4), 2, 64);
    W.dispose();
    await assert.rejects(bq.matvec(W, new Float32Array(64)), /disposed/);
    const F = one.tensor('q4_0', new Uint8Array(18 * 4), 2, 64);
    await assert.rejects(bq.matvec(F, new Float32Array(64)), /another blockquant codec/);
    // a handle of another threaded codec, a forged one, and each through dequantize as well
    const other = await init({ threads: 2 });
    try {
      const G = other.tensor('q4_0', new Uint8Array(18 * 4), 2, 64);
      await assert.rejects(bq.matvec(G, new Float32Array(64)), /another blockquant codec/);
      await assert.rejects(bq.dequantize(G), /another blockquant codec/);
    } finally {
      await other.close();
    }
    const forged = Object.create(Object.getPrototypeOf(F));
    await assert.rejects(bq.matvec(forged, new Float32Array(64)), /not a handle/);
    await assert.rejects(bq.dequantize(W), /disposed/);
  } finally {
    await bq.close();
  }
});

test('threads 1, or no shared memory: the synchronous codec with threads === 1, no error', async () => {
  const a = await init({ threads: 1 });
  assert.equal(a.threads, 1);
  const { bytes, x } = problem('q4_0', 4, 64, SEED);
  const y = a.matvec('q4_0', bytes, 4, x);
  assert.ok(y instanceof Float32Array, 'one thread stays synchronous');
  const b = await initThreads(4, { module: threadsModuleFile, spawn: null, single: () => init() });
  assert.equal(b.threads, 1);
  assert.ok(b.matvec('q4_0', bytes, 4, x) instanceof Float32Array);
  const c = await initThreads(2, {
    module: threadsModuleFile,
    spawn: () => {
      throw new Error('no workers here');
    },
    single: () => init(),
  });
  assert.equal(c.threads, 1);
  assert.match(threadsUnsupported({ WebAssembly }), /SharedArrayBuffer/);
  assert.match(threadsUnsupported({ SharedArrayBuffer, crossOriginIsolated: false, WebAssembly }), /isolated/);
  assert.equal(threadsUnsupported(), '');
  await assert.rejects(init({ threads: 0 }), RangeError);
  await assert.rejects(init({ threads: 1.5 }), RangeError);
});

/**
 * A pool of n Node workers on a fresh shared memory with the threads build's first instance,
 * using the Atomics protocol (control blocks) or messages.
 */
async function rawPool(n, atomics, spawn = spawnNode) {
  const module = await threadsModuleFile();
  const memory = new WebAssembly.Memory({ initial: 256 + 16 * n, maximum: 65536, shared: true });
  const inst = await WebAssembly.instantiate(module, { env: { memory } });
  const ex = /** @type {any} */ (inst.exports);
  const blocks = Array.from({ length: n }, (_, i) => {
    const base = (256 + 16 * i) * 65536; // a MiB each, past the module's data
    const ctl = atomics ? base + 16 * 65536 - CTL.BYTES : 0;
    return { stack: base + (256 << 10), tls: base + (256 << 10), scratch: base + (256 << 10) + 64, ctl };
  });
  assert.ok(ex.bq_thread_scratch_bytes() + (256 << 10) + 64 + CTL.BYTES <= 16 * 65536);
  return { pool: await Pool.start(n, spawn, module, memory, blocks), memory, ex };
}

// Both protocols: Atomics (where Atomics.waitAsync exists, as in Node) and messages (elsewhere).
for (const mode of ['atomics', 'messages']) {
  test(`${mode}: a worker that traps rejects the call (no hang), and the pool keeps serving`, async () => {
    const { pool } = await rawPool(2, mode === 'atomics');
    try {
      // dequantize to an address past the end of memory: a trap in worker 1
      await assert.rejects(
        pool.run([[['bq_q4_0_dequantize', 1 << 20, 2 << 20, 32]], [['bq_q4_0_dequantize', 1 << 20, 0xfffff000, 32]]]),
        /out of bounds/,
      );
      await assert.rejects(pool.run([[['bq_q4_0_dequantize', 1 << 20, 2 << 20, 31]]]), /status/);
      await assert.rejects(pool.run([[['no_such_kernel']]]), /no kernel/);
      await pool.run([[['bq_q4_0_dequantize', 1 << 20, 2 << 20, 32]], []]);
      // more calls than a control block holds go in several rounds
      const many = Array.from(
        { length: 3000 },
        (_, c) => /** @type {[string, ...number[]]} */ (['bq_q4_0_dequantize', 1 << 20, (2 << 20) + c * 128, 32]),
      );
      await pool.run([many, many.slice(0, 5)]);
    } finally {
      pool.close();
    }
  });

  test(`${mode}: a worker that dies rejects the pending and later calls; close() rejects later calls`, async () => {
    /** @type {import('../js/threads.js').WorkerLike[]} */
    const ws = [];
    const { pool } = await rawPool(2, mode === 'atomics', () => {
      const w = spawnNode();
      ws.push(w);
      return w;
    });
    // a long call (many dequantize calls) on worker 0, and worker 0 stopped under it
    const long = Array.from(
      { length: 20000 },
      () => /** @type {[string, ...number[]]} */ (['bq_q4_0_dequantize', 1 << 20, 2 << 20, 4096]),
    );
    const p = pool.run([long, []]);
    ws[0].terminate();
    await assert.rejects(p, /worker 0 failed|closed/);
    await assert.rejects(pool.run([[['bq_q4_0_dequantize', 1 << 20, 2 << 20, 32]]]), /worker 0 failed|closed/);

    const bq = await init({ threads: 2, minSplitBytes: 0 });
    const { bytes, x } = problem('q4_0', 8, 64, SEED);
    await bq.close();
    await bq.close();
    await assert.rejects(bq.matvec('q4_0', bytes, 8, x), /closed/);
  });
}

/**
 * A pool of one fake worker on the Atomics protocol (the test plays the worker on its control
 * block), with the threads build's first instance on the same memory for the calling thread.
 */
async function fakePool() {
  const module = await threadsModuleFile();
  const memory = new WebAssembly.Memory({ initial: 300, maximum: 65536, shared: true });
  const inst = await WebAssembly.instantiate(module, { env: { memory } });
  const ctl = 290 * 65536;
  /** @type {import('../js/threads.js').WorkerLike} */
  const fake = {
    post: () => undefined,
    onMessage: (f) => queueMicrotask(() => f({ type: 'ready' })),
    onError: () => undefined,
    terminate: () => undefined,
  };
  const pool = await Pool.start(1, () => fake, module, memory, [{ stack: 0, tls: 0, scratch: 0, ctl }]);
  const i32 = new Int32Array(memory.buffer, ctl, CTL.BYTES / 4);
  const ex = /** @type {Record<string, any>} */ (inst.exports);
  /** @param {import('../js/threads.js').KernelCall[]} part */
  const local = (part) => {
    for (const [name, ...args] of part) runKernel(ex, name, args, memory);
  };
  return { pool, memory, i32, local };
}

test('atomics: a stale wake (a notify of a round already settled) does not end the next round', async () => {
  // The test plays the worker on the control block: ready at once, DONE written by hand.
  const { pool, i32 } = await fakePool();
  const job = /** @type {import('../js/threads.js').KernelCall[][]} */ ([[['bq_q4_0_dequantize', 0, 0, 32]]]);
  const p1 = pool.run(job);
  assert.equal(Atomics.load(i32, CTL.SEQ), 1);
  Atomics.store(i32, CTL.DONE, 1);
  Atomics.notify(i32, CTL.DONE);
  await p1;
  /** @type {unknown} */
  let settled;
  const p2 = pool.run(job).then(
    () => (settled = 'done'),
    (e) => (settled = e),
  );
  assert.equal(Atomics.load(i32, CTL.SEQ), 2);
  Atomics.notify(i32, CTL.DONE); // round 1's notify, late
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(settled, undefined, 'round 2 still waits for its worker');
  Atomics.store(i32, CTL.DONE, 2);
  Atomics.notify(i32, CTL.DONE);
  await p2;
  assert.equal(settled, 'done');
  pool.close();
});

/**
 * A claimed Q4_0 dequantize of blocks random blocks at q (in memory) to y, the counter at ctr.
 * @param {WebAssembly.Memory} memory
 */
function sharedDequantize(memory, blocks, seed) {
  const q = 1 << 20,
    y = 2 << 20,
    ctr = 3 << 20;
  const { bytes } = problem('q4_0', blocks, 32, seed);
  new Uint8Array(memory.buffer, q, bytes.length).set(bytes);
  new Int32Array(memory.buffer, ctr, 1)[0] = 0;
  const call = /** @type {import('../js/threads.js').KernelCall} */ ([
    '@bq_q4_0_dequantize',
    ctr,
    blocks,
    7, // least
    3, // parts
    2,
    32,
    q,
    18,
    y,
    128,
  ]);
  return {
    call,
    want: one.dequantize('q4_0', bytes),
    got: () => new Float32Array(memory.buffer, y, blocks * 32).slice(),
  };
}

test('shared round: a worker that has not woken is not waited for; the calling thread does all the work', async () => {
  const { pool, memory, i32, local } = await fakePool();
  try {
    for (let r = 1; r <= 3; r++) {
      const { call, want, got } = sharedDequantize(memory, 100, SEED + 70 + r);
      // the fake worker never takes its rounds: each settles on the calling thread's work alone
      await pool.share([call], local);
      same(got(), want, `round ${r}`);
      assert.equal(Atomics.load(i32, CTL.SEQ), r);
      assert.equal(Atomics.load(i32, CTL.GATE), 0, 'the round was taken back from the worker');
      assert.notEqual(Atomics.load(i32, CTL.DONE), r);
    }
  } finally {
    pool.close();
  }
});

test('shared round: a worker that took the round is waited for, and its failure rejects the call', async () => {
  const { pool, memory, i32, local } = await fakePool();
  try {
    const { call, want, got } = sharedDequantize(memory, 50, SEED + 80);
    /** @type {unknown} */
    let settled;
    // the fake worker takes the round as soon as it is posted, before the calling thread's work
    const p = pool
      .share([call], (part) => {
        assert.equal(Atomics.compareExchange(i32, CTL.GATE, 1, -1), 1);
        local(part);
      })
      .then(
        () => (settled = 'done'),
        (e) => (settled = e),
      );
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(settled, undefined, 'the call waits for the worker that took its round');
    Atomics.store(i32, CTL.DONE, 1);
    Atomics.notify(i32, CTL.DONE);
    await p;
    assert.equal(settled, 'done');
    same(got(), want, 'results');
    // round 2: taken, then failed in the worker
    const d2 = sharedDequantize(memory, 50, SEED + 81);
    const p2 = pool.share([d2.call], (part) => {
      Atomics.compareExchange(i32, CTL.GATE, 2, -2);
      local(part);
    });
    const msg = new TextEncoder().encode('worker trap');
    new Uint8Array(memory.buffer, i32.byteOffset + CTL.MSG * 4, msg.length).set(msg);
    i32[CTL.MSGLEN] = msg.length;
    i32[CTL.STATUS] = 1;
    Atomics.store(i32, CTL.DONE, 2);
    Atomics.notify(i32, CTL.DONE);
    await assert.rejects(p2, /worker trap/);
  } finally {
    pool.close();
  }
});

for (const mode of ['atomics', 'messages']) {
  test(`${mode}: shared rounds with real workers equal one thread; the calling thread's failure rejects after the workers`, async () => {
    // the pool's workers and its first instance on the calling thread
    const { pool, memory, ex } = await rawPool(2, mode === 'atomics');
    /** @param {import('../js/threads.js').KernelCall[]} part */
    const local = (part) => {
      for (const [name, ...args] of part) runKernel(ex, name, args, memory);
    };
    try {
      for (let r = 0; r < 200; r++) {
        const { call, want, got } = sharedDequantize(memory, 1 + ((r * 37) % 300), SEED + 90 + r);
        await pool.share([call], local);
        same(got(), want, `round ${r}`);
      }
      const { call } = sharedDequantize(memory, 300, SEED + 99);
      await assert.rejects(
        pool.share([call], () => {
          throw new Error('local failure');
        }),
        /local failure/,
      );
      await assert.rejects(pool.share([['bq_q4_0_dequantize', 0, 0, 32]], local), /claimed calls only/);
    } finally {
      pool.close();
    }
  });
}

/** @param {string} code */
const runChild = (code) =>
  new Promise((resolve) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', code],
      { cwd: new URL('..', import.meta.url), timeout: 60000 },
      (err, stdout, stderr) => resolve({ code: err ? (err.code ?? err.signal) : 0, stdout, stderr }),
    ),
  );

test('a Node process with a thread pool exits: after close(), and when idle without it', async () => {
  const body = `import { init } from './js/index-node.js';
const bq = await init({ threads: 2, minSplitBytes: 0 });
const y = await bq.matvec('q8_0', new Uint8Array(34 * 4), 4, new Float32Array(32));
console.log(bq.threads, y.length);`;
  for (const code of [`${body}\nawait bq.close();`, body]) {
    const r = /** @type {{ code: unknown, stdout: string, stderr: string }} */ (await runChild(code));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), '2 4');
  }
});

test('threads are capped at the host parallelism, and the codec says why it runs fewer than asked', async () => {
  const { availableParallelism } = await import('node:os');
  const host = availableParallelism();
  const c = await init({ threads: 33 });
  try {
    assert.equal(c.threads, Math.min(33, host));
    assert.equal(c.threadsRequested, 33);
    assert.match(c.threadsError, new RegExp(`capped at ${host}`));
    if ('workers' in c) assert.equal(c.workers, c.threads - 1);
  } finally {
    await /** @type {any} */ (c).close?.();
  }
  const two = await init({ threads: Math.min(2, host) });
  try {
    assert.equal(two.threadsError, '');
  } finally {
    await /** @type {any} */ (two).close?.();
  }
});

test('Node flags workers refuse (--expose-gc, --max-old-space-size, --stack-size, wasm flags) do not cost the threads', async () => {
  const { availableParallelism } = await import('node:os');
  if (availableParallelism() < 2) return assert.fail('this test needs a host that runs 2 threads');
  const entry = new URL('../js/index-node.js', import.meta.url).href;
  const script = `const { init } = await import(${JSON.stringify(entry)});
    const c = await init({ threads: 2 });
    console.log(JSON.stringify({ threads: c.threads, why: c.threadsError }));
    await c.close?.();`;
  for (const flags of [
    ['--expose-gc'],
    ['--max-old-space-size=512'],
    ['--stack-size=900'],
    ['--experimental-wasm-relaxed-simd'],
    ['--expose-gc', '--max-old-space-size=512', '--stack-size=900'],
  ]) {
    const out = await new Promise((ok, fail) =>
      execFile(process.execPath, [...flags, '--input-type=module', '-e', script], { timeout: 30000 }, (e, so, se) =>
        e ? fail(new Error(`${flags}: ${e.message} ${se}`)) : ok(so),
      ),
    );
    assert.deepEqual(JSON.parse(String(out)), { threads: 2, why: '' }, flags.join(' '));
  }
});
