// The page's worker (worker.js) and its message protocol: each call posts { id, op, ...args } and
// resolves with the reply of the same id (or rejects with its error and code).

/**
 * @typedef {import('./worker.js').Ops} Ops
 * @typedef {import('./viewer-ops.js').ViewerOps} ViewerOps
 * @typedef {import('./worker.js').Reply} Reply
 */

// ?backend=simd128|scalar picks the wasm build (the worker reads it from its own URL).
const workerUrl = new URL('./worker.js', import.meta.url);
const askedBackend = new URLSearchParams(location.search).get('backend');
if (askedBackend) workerUrl.searchParams.set('backend', askedBackend);
export const worker = new Worker(workerUrl, { type: 'module' });
let nextId = 1;
/** @type {Map<number, { resolve: (result: unknown) => void, reject: (error: Error) => void }>} */
const pending = new Map();
worker.onmessage = (/** @type {MessageEvent<Reply>} */ ev) => {
  const r = ev.data;
  const p = /** @type {NonNullable<ReturnType<typeof pending.get>>} */ (pending.get(r.id)); // every reply answers a call
  pending.delete(r.id);
  if (r.ok) p.resolve(r.result);
  else p.reject(Object.assign(new Error(r.error), { code: r.code, detail: r.detail }));
};
/**
 * Sends an operation to the worker; resolves with its result.
 * @param {string} op
 * @param {object} [args]
 * @returns {Promise<unknown>}
 */
export const post = (op, args = {}) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, op, ...args });
  });
/**
 * A tensor operation of the worker, with its arguments and result as worker.js's Ops types them.
 * @template {keyof Ops} K
 * @param {K} op
 * @param {Ops[K]['args']} args
 * @returns {Promise<Ops[K]['result']>}
 */
export const call = (op, args) => /** @type {Promise<Ops[K]['result']>} */ (post(op, args));
/**
 * A model viewer operation of the worker (viewer-ops.js), typed as ViewerOps types it.
 * @template {keyof ViewerOps} K
 * @param {K} op
 * @param {ViewerOps[K]['args']} [args]
 * @returns {Promise<ViewerOps[K]['result']>}
 */
export const viewerCall = (op, args) => /** @type {Promise<ViewerOps[K]['result']>} */ (post(op, args));

/** The code a worker error carries (see worker.js: 'cancelled', or openGGUF's such as 'SPLIT'). */
export const codeOf = (/** @type {unknown} */ e) =>
  typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
