// The blockquant worker under Node's worker_threads (Node-only; started by js/threads-node.js).
// See js/worker-core.js.
import { parentPort } from 'node:worker_threads';
import { serve } from './worker-core.js';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
serve(
  (reply) => port.postMessage(reply),
  (handler) => port.on('message', handler),
);
