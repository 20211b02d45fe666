// Worker threads in Node (Node-only): the threads build read from the package's files, workers
// from node:worker_threads running js/worker-node.js. See js/threads.js.
import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { execArgv } from 'node:process';
import { initThreads, threadsModuleURL } from './threads.js';
import { init as initNode } from './index-node.js';

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
 * init({ threads: n }) for Node: a ThreadedCodec on n worker threads, or where threads cannot
 * run, the synchronous codec with threads = 1 (init(options) without threads).
 * @param {import('./init.js').InitOptions & { threads?: number } & import('./threads.js').ThreadOptions} [options]
 * @returns {Promise<import('./threads.js').ThreadedCodec | (import('./codec.js').Codec & { threads: 1 })>}
 * @throws {RangeError} threads that is not a positive integer; init's errors
 */
export function init(options = {}) {
  const { threads = 1, minSplitBytes, roundBytes, ...rest } = options;
  // The threads build has the SIMD128 kernels: a request for another backend runs on one thread.
  const spawn = rest.backend && rest.backend !== 'auto' && rest.backend !== 'simd128' ? null : spawnNode;
  return initThreads(threads, {
    module: threadsModuleFile,
    spawn: rest.module === undefined ? spawn : null,
    single: () => initNode(rest),
    stagingBytes: rest.stagingBytes,
    minSplitBytes,
    roundBytes,
  });
}
