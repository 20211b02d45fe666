// The module worker of the page: the smoke script on both backends, then on two threads.
import * as lib from 'blockquant';
import { smoke, smokeThreads } from './smoke.js';

/** @param {unknown} e */
const error = (e) => ({ error: String((e && /** @type {Error} */ (e).stack) || e) });
try {
  postMessage({ what: 'worker', body: [await smoke(lib), await smoke(lib, { init: { backend: 'scalar' } })] });
} catch (e) {
  postMessage({ what: 'worker', body: error(e) });
}
try {
  postMessage({ what: 'worker-threads', body: await smokeThreads(lib) });
} catch (e) {
  postMessage({ what: 'worker-threads', body: error(e) });
}
