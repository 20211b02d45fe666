// The page's side of quantize-worker.js: requests with an id, answered by progress messages and
// then one 'done' or 'error' reply. The worker starts on the first request.

/** @typedef {import('./quantize-worker.js').Reply} Reply */
/** @typedef {import('./quantize-worker.js').Progress} Progress */

/**
 * @param {string | null} backend the wasm build to ask for (?backend= of the page), or null
 * @returns {{ ask: (msg: Record<string, unknown>, progress?: (p: Progress) => void) => Promise<any>,
 *   cancel: () => void }} ask: sends a request and resolves with its result (rejects with an Error
 *   carrying the worker's code); cancel: aborts the running start
 */
export function quantizeWorker(backend) {
  /** @type {Worker | null} */
  let worker = null;
  let nextId = 1;
  /** @type {Map<number, { resolve: (r: any) => void, reject: (e: Error) => void, progress?: (p: Progress) => void }>} */
  const pending = new Map();
  const start = () => {
    const url = new URL('./quantize-worker.js', import.meta.url);
    if (backend) url.searchParams.set('backend', backend);
    const w = new Worker(url, { type: 'module' });
    w.onmessage = (/** @type {MessageEvent<Reply>} */ ev) => {
      const r = ev.data;
      const p = pending.get(r.id);
      if (!p) return;
      if (r.kind === 'progress') return p.progress?.(r.progress);
      pending.delete(r.id);
      if (r.kind === 'done') p.resolve(r.result);
      else p.reject(Object.assign(new Error(r.error), { code: r.code }));
    };
    w.onerror = (ev) => {
      for (const p of pending.values()) p.reject(new Error(`the quantize worker failed: ${ev.message}`));
      pending.clear();
    };
    return w;
  };
  return {
    ask(msg, progress = () => {}) {
      worker ??= start();
      const id = nextId++;
      const w = worker;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, progress });
        w.postMessage({ id, ...msg });
      });
    },
    cancel() {
      worker?.postMessage({ id: 0, op: 'cancel' });
    },
  };
}
