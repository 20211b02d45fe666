// The builds the weighted-quantizer tests (tests/imat-*.test.js) run every kernel variant on: this
// run's build (its test variant, every kernel exported) and, on the simd128 run, the clang-19
// threads build on a shared memory of its own; each as a Raw, with the grid search tables of the
// given types built into its memory first where the quantizers need them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { typeId } from '../../js/index.js';
import { BACKEND, testCodec, testWasmFile } from './helpers.js';
import { Raw } from './raw.js';

const BQ_OK = 0;

/** A fresh instance of the clang-19 threads build (its test variant) on its own shared memory. */
export async function threadsInstance() {
  const module = await WebAssembly.compile(readFileSync(testWasmFile('threads')));
  const memory = new WebAssembly.Memory({ initial: 320, maximum: 65536, shared: true });
  return (await WebAssembly.instantiate(module, { env: { memory } })).exports;
}

/**
 * A Raw over exports with the search tables of `types` built into its memory (tables[t]: where
 * type t's are; types sharing a family share the first's), its scratch starting past them.
 * @param {WebAssembly.Exports} exports @param {string[]} types
 */
export function withTables(exports, types) {
  const raw = new Raw(exports);
  /** @type {Record<string, number>} */
  const tables = {};
  for (const t of types) {
    if (raw.x.bq_quant_tables_ready(typeId(t))) continue; // built with another type of its family
    tables[t] = raw.alloc(raw.x.bq_quant_tables_bytes(typeId(t)));
    assert.equal(raw.x.bq_quant_tables_init(typeId(t), tables[t]), BQ_OK, `${t} tables`);
  }
  raw.base = raw.top;
  return Object.assign(raw, { tables });
}

/**
 * The builds under test, each { name, raw } with the tables of `types` built.
 * @param {string[]} [types] the grid types whose tables the file's kernels need
 */
export async function builds(types = []) {
  const list = [{ name: `${BACKEND} build`, raw: withTables((await testCodec()).exports, types) }];
  if (BACKEND === 'simd128')
    list.push({ name: 'threads build (clang-19)', raw: withTables(await threadsInstance(), types) });
  return list;
}

/** The variants of kernel base a build exports: the public one, __ref, __simd128. */
export const variants = (/** @type {Raw} */ raw, /** @type {string} */ base) =>
  [base, `${base}__ref`, `${base}__simd128`].filter((n) => typeof raw.x[n] === 'function');
