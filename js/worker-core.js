// The inside of a blockquant worker (js/threads.js): one instance of the threads build on the
// pool's shared memory, running the kernel calls it is sent. Shared by the browser entry
// (js/worker.js) and the Node one (js/worker-node.js); no runtime-specific code here.
//
// Protocol (structured-clone messages):
//   in:  { type: 'init', module, memory, stack, tls, scratch }   out: { type: 'ready' }
//   in:  { type: 'run', id, calls: [name, ...args][] }           out: { type: 'done', id }
//   any failure (a trap, a kernel status other than 0):          out: { type: 'error', id, message }
// init places this instance's stack (its top address), TLS block and kernel scratch block, all
// allocated by the pool in the shared memory; the kernels' static data was written once by the
// main thread's instance (wasm-ld's __wasm_init_memory runs only in the first instance).

/**
 * @typedef {{ type: 'init', module: WebAssembly.Module, memory: WebAssembly.Memory, stack: number, tls: number, scratch: number }
 *   | { type: 'run', id: number, calls: [string, ...number[]][] }} WorkerRequest
 * @typedef {{ type: 'ready' } | { type: 'done', id: number } | { type: 'error', id: number, message: string }} WorkerReply
 */

/**
 * Serves requests until the worker is terminated.
 * @param {(reply: WorkerReply) => void} post sends a reply to the pool
 * @param {(handler: (request: WorkerRequest) => void) => void} listen registers the request handler
 */
export function serve(post, listen) {
  /** @type {Record<string, Function> | null} */
  let k = null;
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
        post({ type: 'ready' });
        return;
      }
      if (!k) throw new Error('blockquant worker: run before init');
      for (const [name, ...args] of req.calls) {
        const fn = k[name];
        if (typeof fn !== 'function') throw new Error(`blockquant worker: no kernel ${name}`);
        const status = fn(...args);
        if (status !== 0) throw new Error(`blockquant kernel ${name} failed (status ${status})`);
      }
      post({ type: 'done', id });
    } catch (e) {
      post({ type: 'error', id, message: `${/** @type {Error} */ (e)?.message ?? e}` });
    }
  });
}
