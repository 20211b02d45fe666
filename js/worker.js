// The blockquant worker as a browser (or Deno) module worker: js/threads.js starts it with
// new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }). See js/worker-core.js.
import { serve } from './worker-core.js';

const scope =
  /** @type {{ postMessage(m: unknown): void, addEventListener(t: string, f: (e: MessageEvent) => void): void }} */ (
    /** @type {unknown} */ (globalThis)
  );
serve(
  (reply) => scope.postMessage(reply),
  (handler) => scope.addEventListener('message', (e) => handler(e.data)),
);
