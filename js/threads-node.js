// Worker threads in Node (Node-only): the threads build read from the package's files, workers
// from node:worker_threads running js/worker-node.js. See js/threads.js.
import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { execArgv } from 'node:process';
import { initThreads, threadsModuleURL } from './threads.js';

/**
 * The process's Node options for a worker, without those about the main script (a worker given
 * --input-type, inherited from `node --input-type=module -e ...`, refuses to start).
 * @returns {string[]}
 */
function workerArgv() {
  const out = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i];
    if (/^(-e|-p|--eval|--print)$/.test(a)) i++;
    else if (!/^--(input-type|eval|print)=/.test(a)) out.push(a);
  }
  return out;
}

/**
 * A Node worker_threads worker running js/worker-node.js.
 * @type {import('./threads.js').Spawn}
 */
export function spawnNode() {
  const w = new Worker(new URL('./worker-node.js', import.meta.url), { execArgv: workerArgv() });
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
 * @returns {Promise<import('./threads.js').ThreadedCodec | (import('./codec.js').Codec & { threads: 1 })>}
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
    ...thresholds,
  });
}
