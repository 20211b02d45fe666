// The module worker of the page: the smoke script on both backends.
import * as lib from 'blockquant';
import { smoke } from './smoke.js';

try {
  postMessage([await smoke(lib), await smoke(lib, { init: { backend: 'scalar' } })]);
} catch (e) {
  postMessage({ error: String((e && /** @type {Error} */ (e).stack) || e) });
}
