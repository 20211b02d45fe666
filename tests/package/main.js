// A page: the smoke script on the automatic backend (its result posted first, so the test can see
// what that alone downloaded), then on two threads (workers sharing memory: the server sends the
// cross-origin isolation headers), then the split layout (init({ layout: 'split' })), then the same in a module worker on both backends and on two
// threads.
import * as lib from 'blockquant';
import { smoke, smokeThreads, smokeSplit } from './smoke.js';

const name = new URLSearchParams(location.search).get('name');
/** @param {string} what @param {unknown} body */
const post = (what, body) => fetch(`/result/${name}-${what}`, { method: 'POST', body: JSON.stringify(body) });
/** @param {unknown} e */
const error = (e) => ({ error: String((e && /** @type {Error} */ (e).stack) || e) });

try {
  await post('page', [await smoke(lib)]);
} catch (e) {
  await post('page', error(e));
}
try {
  await post('page-threads', await smokeThreads(lib));
} catch (e) {
  await post('page-threads', error(e));
}
try {
  await post('page-split', await smokeSplit(lib));
} catch (e) {
  await post('page-split', error(e));
}
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
worker.onmessage = (e) => post(e.data.what, e.data.body);
worker.onerror = (e) => post('worker', { error: `worker: ${e.message}` });
