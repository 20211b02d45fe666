// Node, Deno and Bun: the smoke script against the installed package, on the automatic backend
// and on the scalar one, then on two threads, then in the split layout; prints the results as JSON.
import * as lib from 'blockquant';
import * as nodeLib from 'blockquant/node';
import { smoke, smokeThreads, smokeSplit } from './smoke.js';

const results = [await smoke(lib), await smoke(lib, { init: { backend: 'scalar' } }), await smoke(nodeLib)];
console.log(JSON.stringify({ results, threads: await smokeThreads(lib), split: await smokeSplit(lib) }));
