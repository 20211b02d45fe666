// The 8-element grid quantizers IQ2_XXS, IQ2_XS and IQ2_S, and the search tables they share with
// IQ1_S and IQ1_M (src/imat/iq2_tables.c): the tables against ggml's iq2xs_init_impl for every
// grid (grid, map and neighbour lists, bit for bit), the statuses around them. Run on this build,
// and on the simd128 run also on the clang-19 threads build (wasm/blockquant-threads.wasm on a
// shared memory). Seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ggml from './lib/ggml.js';
import { BACKEND, SEED, codec, firstDiff } from './lib/helpers.js';
import { Raw } from './lib/raw.js';
import { typeId } from '../js/index.js';
import { threadsModuleFile } from '../js/threads-node.js';

console.log(`# imat-iq2 test, ${BACKEND} build, seed ${SEED}`);

const BQ_OK = 0,
  BQ_EINVAL = -1;

/** The types of each grid of iq2xs_init_impl (IQ1_S and IQ1_M share theirs), by grid size. */
const GRIDS = [
  { size: 256, types: ['iq2_xxs'] },
  { size: 512, types: ['iq2_xs'] },
  { size: 1024, types: ['iq2_s'] },
  { size: 2048, types: ['iq1_s', 'iq1_m'] },
];

/** A fresh instance of the clang-19 threads build on its own shared memory. */
async function threadsInstance() {
  const module = await threadsModuleFile();
  const memory = new WebAssembly.Memory({ initial: 320, maximum: 65536, shared: true });
  return (await WebAssembly.instantiate(module, { env: { memory } })).exports;
}

/** The builds under test: this one, and on the simd128 run the clang-19 threads build. */
async function builds() {
  const list = [{ name: `${BACKEND} build`, raw: new Raw((await codec()).exports) }];
  if (BACKEND === 'simd128') list.push({ name: 'threads build (clang-19)', raw: new Raw(await threadsInstance()) });
  return list;
}
const BUILDS = await builds();

for (const { size, types } of GRIDS) {
  test(`${types.join(', ')}: the search tables equal ggml iq2xs_init_impl (grid of ${size}) bit for bit`, () => {
    const want = ggml.tables(typeId(types[0]));
    const need = want.grid.length + want.map.length + want.neighbours.length;
    for (const b of BUILDS) {
      const raw = b.raw;
      raw.reset();
      const bytes = raw.x.bq_quant_tables_bytes(typeId(types[0]));
      assert.ok(bytes >= need, `${b.name} ${types[0]}: ${bytes} bytes hold ggml's ${need}`);
      for (const t of types.slice(1))
        assert.equal(raw.x.bq_quant_tables_bytes(typeId(t)), bytes, `${b.name}: ${t} has ${types[0]}'s tables`);
      const p = raw.alloc(bytes);
      new Uint8Array(raw.mem.buffer, p, bytes).fill(0xcd);
      // IQ1_M's tables are IQ1_S's (ggml's iq2_data[2] serves both): built through the last type
      // of the grid, they are ready for every one.
      const by = typeId(types[types.length - 1]);
      assert.equal(raw.x.bq_quant_tables_init(by, p + 8), BQ_EINVAL, `${b.name}: unaligned memory refused`);
      const t0 = performance.now();
      assert.equal(raw.x.bq_quant_tables_init(by, p), BQ_OK);
      const ms = performance.now() - t0;
      for (const t of types) assert.equal(raw.x.bq_quant_tables_ready(typeId(t)), 1, `${b.name} ${t}: ready`);
      // Our layout is ggml's three arrays, back to back: grid, map, neighbour lists.
      let o = p;
      for (const part of ['grid', 'map', 'neighbours']) {
        const got = raw.bytes(o, want[part].length);
        const d = firstDiff(got, want[part]);
        assert.equal(d, -1, `${b.name} ${types[0]} ${part}: byte ${d} differs`);
        o += want[part].length;
      }
      console.log(`# ${b.name} grid ${size}: tables built in ${ms.toFixed(1)} ms, ${bytes} bytes`);
      raw.x.bq_quant_tables_drop(typeId(types[0]));
      for (const t of types) assert.equal(raw.x.bq_quant_tables_ready(typeId(t)), 0, `${b.name} ${t}: dropped`);
    }
  });
}
