#!/usr/bin/env node
// bench/model.js's blockquant side, in a process of its own (its peak RSS is measured alone):
//   node bench/model-child.js IN OUT FTYPE THREADS [IMATRIX]
// quantizes IN to OUT with quantizeModel (js/node.js) and prints the seconds it took.
import { quantizeModel } from '../js/node.js';

const [input, output, ftype, threads, imatrix] = process.argv.slice(2);
const t0 = performance.now();
await quantizeModel(input, output, {
  ftype,
  threads: Number(threads),
  force: true,
  ...(imatrix ? { imatrix } : {}),
});
console.log(((performance.now() - t0) / 1000).toFixed(3));
