// Worker threads in Node (Node-only): the threads build read from the package's files, workers
// from node:worker_threads running js/worker-node.js. See js/threads.js.
import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { initThreads, threadsModuleURL } from './threads.js';

/**
 * A Node worker_threads worker running js/worker-node.js.
 * @type {import('./threads.js').Spawn}
 */
export function spawnNode() {
  // No Node options: js/worker-node.js needs none, and a worker given the parent's would refuse
  // the process-wide ones (--max-old-space-size, --stack-size, --expose-gc, V8 flags, and
  // --input-type from `node --input-type=module -e ...`) and not start.
  const w = new Worker(new URL('./worker-node.js', import.meta.url), { execArgv: [] });
  return {
    post: (m) => w.postMessage(m),
    onMessage: (f) => w.on('message', f),
    onError: (f) => {
      w.on('error', f);
      w.on('exit', (code) => f(new Error(`the worker exited (code ${code})`)));
    },
    terminate: () => void w.terminate(),
    ref: () => w.ref(),
    unref: () => w.unref(),
  };
}

/**
 * The threads build, read from wasm/blockquant-threads.wasm (the embedded copy when this module
 * was bundled elsewhere).
 * @returns {Promise<WebAssembly.Module>}
 */
export async function threadsModuleFile() {
  let bytes;
  try {
    bytes = await readFile(new URL('../wasm/blockquant-threads.wasm', import.meta.url));
  } catch {
    return threadsModuleURL();
  }
  return WebAssembly.compile(bytes);
}

/**
 * init({ threads: n }) for Node (called by js/index-node.js): a ThreadedCodec on n worker threads,
 * or where threads cannot run, the synchronous codec of `single` with threads = 1.
 * @param {number} threads
 * @param {import('./init.js').InitOptions} rest init's other options
 * @param {() => Promise<import('./codec.js').Codec>} single the one-thread codec
 * @param {import('./threads.js').ThreadOptions} thresholds
 * @returns {ReturnType<typeof initThreads>}
 * @throws {RangeError} threads that is not a positive integer
 */
export function initThreadsNode(threads, rest, single, thresholds) {
  // The threads build has the SIMD128 kernels: a request for another backend, or a module of the
  // caller's, runs on one thread.
  const other = (rest.backend && rest.backend !== 'auto' && rest.backend !== 'simd128') || rest.module !== undefined;
  return initThreads(threads, {
    module: threadsModuleFile,
    spawn: other ? null : spawnNode,
    single,
    stagingBytes: rest.stagingBytes,
    parallelism: availableParallelism(),
    ...thresholds,
  });
}
