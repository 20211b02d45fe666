// tests/model-memory.test.js's child: quantizes bigModelSource(spec) to a counting sink and
// prints, as JSON, the bytes written, a hash of them, the largest JS heap + external memory
// (ArrayBuffers, wasm memory) seen at any progress call, the codec's wasm memory, and the peak and
// starting RSS (VmHWM, VmRSS). argv: JSON { spec, ftype, threads }.
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { quantizeModel } from '../../js/node.js';
import { bigModelSource } from './big-model.js';

const { spec, ftype, threads } = JSON.parse(process.argv[2]);
const status = (/** @type {string} */ k) =>
  Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
const startRSS = status('VmRSS');
const h = createHash('sha256');
let bytes = 0;
let peakJS = 0;
const src = bigModelSource(spec);
await quantizeModel(
  src,
  (/** @type {Uint8Array} */ c) => {
    h.update(c);
    bytes += c.length;
  },
  {
    ftype,
    threads,
    onProgress: () => {
      const m = process.memoryUsage();
      peakJS = Math.max(peakJS, m.heapUsed + m.external);
    },
  },
);
console.log(
  JSON.stringify({ inputBytes: src.size, bytes, sha: h.digest('hex'), peakJS, peakRSS: status('VmHWM'), startRSS }),
);
