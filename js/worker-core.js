// The inside of a blockquant worker (js/threads.js): one instance of the threads build on the
// pool's shared memory, running the kernel calls it is sent. Shared by the browser entry
// (js/worker.js) and the Node one (js/worker-node.js); no runtime-specific code here.
//
// Start (structured-clone messages):
//   in:  { type: 'init', module, memory, stack, tls, scratch, ctl }   out: { type: 'ready' }
// init places this instance's stack (its top address), TLS block and kernel scratch block, all
// allocated by the pool in the shared memory; the kernels' static data was written once by the
// main thread's instance (wasm-ld's __wasm_init_memory runs only in the first instance).
//
// Then the calls come one of two ways:
// - ctl = 0, messages:
//     in:  { type: 'run', id, calls: [name, ...args][] }   out: { type: 'done', id }
//     (a name starting with '@' is a claimed call, shared by the workers: see claim below)
//     a failure (a trap, a kernel status other than 0):    out: { type: 'error', id, message }
// - ctl = the address of this worker's control block (CTL below), where the runtime has
//   Atomics.waitAsync for the main thread: the worker sleeps in Atomics.wait on the block's SEQ
//   word, takes the round by turning GATE from SEQ to -SEQ (the main thread may have taken it back
//   first: it turns GATE to 0 when it did all of a shared round's work itself before this worker
//   woke, and then the worker skips the round), runs the calls written in the block, writes STATUS
//   (and the message of a failure) and stores SEQ into DONE with a notify. No message per call: a
//   round trip is a futex wake each way. After a round the worker polls SEQ for SPIN_MS before it
//   sleeps, so that back-to-back calls (a layer's matvecs) do not each wait for a wake.

/** The control block of the Atomics protocol: i32 word indexes, and its size in bytes. */
export const CTL = Object.freeze({
  SEQ: 0, // round number, written by the main thread
  DONE: 1, // the last round finished, written by the worker
  STATUS: 2, // 0 ok, 1 failed
  MSGLEN: 3, // bytes of the failure message at MSG
  NCALLS: 4, // calls in the job at JOB
  GATE: 5, // SEQ when posted, -SEQ once the worker took the round, 0 when the main thread took it back
  MSG: 16, // word index of up to MSG_BYTES of UTF-8
  MSG_BYTES: 1024,
  JOB: 16 + 256, // word index of the calls: [kernel index, argc, ...args] each
  BYTES: 8192,
});

/** How long a worker polls for the next round before it sleeps (ms). */
export const SPIN_MS = 0.2;

/**
 * @typedef {{ type: 'init', module: WebAssembly.Module, memory: WebAssembly.Memory, stack: number, tls: number,
 *   scratch: number, ctl: number }
 *   | { type: 'run', id: number, calls: [string, ...number[]][] }} WorkerRequest
 * @typedef {{ type: 'ready' } | { type: 'done', id: number } | { type: 'error', id: number, message: string }} WorkerReply
 */

/**
 * The kernel names of a build in a fixed order (its function exports), so that a call can name
 * its kernel by index.
 * @param {WebAssembly.Module} module
 * @returns {string[]}
 */
export function kernelNames(module) {
  return WebAssembly.Module.exports(module)
    .filter((e) => e.kind === 'function')
    .map((e) => e.name);
}

/**
 * @param {Record<string, any>} k
 * @param {string} name
 * @param {number[]} args
 */
function call(k, name, args) {
  const fn = k[name];
  if (typeof fn !== 'function') throw new Error(`blockquant worker: no kernel ${name}`);
  const status = fn(...args);
  if (status !== 0) throw new Error(`blockquant kernel ${name} failed (status ${status})`);
}

/**
 * A claimed call, '@' + kernel name, args [counter, total, least, parts, countIndex, countScale,
 * base0, stride0, base1, stride1, ...]: the threads share the units [0, total) of one job, each
 * taking the next chunk from the i32 at counter (the first unit not yet taken; zeroed by the main
 * thread) by compare-and-swap until none is left. A chunk is 1/parts of the units left, but at
 * least `least` units: large chunks first, so that few calls are made, and small ones at the end,
 * so that the threads finish close together even when one started late or runs slower (another
 * process on its core). A chunk at start of n units calls the kernel with argument
 * i = base_i + start * stride_i, and n * countScale inserted at countIndex.
 * @param {Record<string, any>} k
 * @param {string} name
 * @param {number[]} a
 * @param {WebAssembly.Memory} memory
 */
function claim(k, name, a, memory) {
  const [counter, total, least, parts, ci, cs] = a;
  const ctr = new Int32Array(memory.buffer, counter, 1);
  for (let start = Atomics.load(ctr, 0); start < total;) {
    const n = Math.min(total - start, Math.max(least, Math.ceil((total - start) / parts)));
    const seen = Atomics.compareExchange(ctr, 0, start, start + n);
    if (seen !== start) {
      start = seen; // another thread took it: try again from there
      continue;
    }
    const args = [];
    for (let i = 6; i < a.length; i += 2) args.push(a[i] + start * a[i + 1]);
    args.splice(ci, 0, n * cs);
    call(k, name, args);
    start = Atomics.load(ctr, 0);
  }
}

/**
 * @param {Record<string, any>} k
 * @param {string} name a kernel, or '@' and a kernel for a claimed call
 * @param {number[]} args
 * @param {WebAssembly.Memory} memory
 */
export function run(k, name, args, memory) {
  if (name[0] === '@') claim(k, name.slice(1), args, memory);
  else call(k, name, args);
}

/**
 * Runs the calls the main thread writes into the control block at ctl, forever (until the worker
 * is terminated).
 * @param {Record<string, any>} k
 * @param {string[]} names
 * @param {WebAssembly.Memory} memory
 * @param {number} ctl
 */
function loop(k, names, memory, ctl) {
  const i32 = new Int32Array(memory.buffer, ctl, CTL.BYTES / 4);
  const u32 = new Uint32Array(memory.buffer, ctl, CTL.BYTES / 4);
  const enc = new TextEncoder();
  // The block was zeroed before init; reading SEQ here instead would skip a round posted between
  // the ready message and this line, and the main thread would wait for it forever.
  let seen = 0;
  for (;;) {
    const until = performance.now() + SPIN_MS;
    while (Atomics.load(i32, CTL.SEQ) === seen && performance.now() < until);
    // A wake may be stale (the notify of a round already run, delayed on the main thread): sleep
    // until SEQ has moved.
    while (Atomics.load(i32, CTL.SEQ) === seen) Atomics.wait(i32, CTL.SEQ, seen);
    seen = Atomics.load(i32, CTL.SEQ);
    // Taken back by the main thread (it did the whole shared round before this worker woke), or
    // already followed by a newer round: nothing to run, no DONE to write.
    if (Atomics.compareExchange(i32, CTL.GATE, seen, -seen) !== seen) continue;
    let status = 0;
    try {
      for (let c = 0, p = CTL.JOB, n = i32[CTL.NCALLS]; c < n; c++) {
        // the top bit of the kernel index marks a claimed call
        const name = (u32[p] >>> 31 ? '@' : '') + names[u32[p] & 0x7fffffff],
          argc = u32[p + 1];
        run(k, name, Array.from(u32.subarray(p + 2, p + 2 + argc)), memory);
        p += 2 + argc;
      }
    } catch (e) {
      status = 1;
      const msg = enc.encode(`${/** @type {Error} */ (e)?.message ?? e}`).slice(0, CTL.MSG_BYTES);
      new Uint8Array(memory.buffer, ctl + CTL.MSG * 4, msg.length).set(msg);
      i32[CTL.MSGLEN] = msg.length;
    }
    i32[CTL.STATUS] = status;
    Atomics.store(i32, CTL.DONE, seen);
    Atomics.notify(i32, CTL.DONE);
  }
}

/**
 * Serves requests until the worker is terminated.
 * @param {(reply: WorkerReply) => void} post sends a reply to the pool
 * @param {(handler: (request: WorkerRequest) => void) => void} listen registers the request handler
 */
export function serve(post, listen) {
  /** @type {Record<string, any> | null} */
  let k = null;
  /** @type {WebAssembly.Memory | null} */
  let mem = null;
  listen((req) => {
    const id = req.type === 'run' ? req.id : -1;
    try {
      if (req.type === 'init') {
        const inst = new WebAssembly.Instance(req.module, { env: { memory: req.memory } });
        const ex = /** @type {Record<string, any>} */ (inst.exports);
        ex.__stack_pointer.value = req.stack;
        ex.__wasm_init_tls(req.tls);
        ex.bq_thread_scratch_init(req.scratch);
        k = ex;
        mem = req.memory;
        post({ type: 'ready' });
        if (req.ctl) loop(ex, kernelNames(req.module), req.memory, req.ctl);
        return;
      }
      if (!k) throw new Error('blockquant worker: run before init');
      for (const [name, ...args] of req.calls) run(k, name, args, /** @type {WebAssembly.Memory} */ (mem));
      post({ type: 'done', id });
    } catch (e) {
      post({ type: 'error', id, message: `${/** @type {Error} */ (e)?.message ?? e}` });
    }
  });
}
