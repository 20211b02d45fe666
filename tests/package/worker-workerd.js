// workerd: the package bundled for workerd (the "workerd" export condition: the builds are wasm
// modules; the split layout's too), and the default entry bundled as any app would be, whose init() must say what to pass.
import * as lib from 'blockquant';
import { init as defaultInit } from './default-entry.js';
import { smoke, smokeSplit } from './smoke.js';

export default {
  async fetch() {
    const out = {
      results: [await smoke(lib), await smoke(lib, { init: { backend: 'scalar' } })],
      split: await smokeSplit(lib),
      plain: '',
    };
    try {
      await defaultInit();
      out.plain = 'init() succeeded';
    } catch (e) {
      out.plain = String(/** @type {Error} */ (e).message);
    }
    return Response.json(out);
  },
};
