// What each build exports. The packaged modules (wasm/) carry only the public kernels, so the
// reference kernels that have a SIMD twin are not shipped; the test variants (build/test/, linked
// from the same objects) add every __ref / __simd128 / __relaxed kernel for the kernel tests. Both
// say which build they are through bq_build_info, which the loader reads instead of export names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { buildInfo, instantiate } from '../js/loader.js';
import { init } from '../js/index.js';
import { testWasmFile } from './lib/helpers.js';

const BUILDS = /** @type {const} */ (['simd128', 'scalar', 'relaxed', 'threads', 'relaxed-threads']);
const packaged = (/** @type {string} */ b) => readFileSync(new URL(`../wasm/blockquant-${b}.wasm`, import.meta.url));
const ISA_NAME = /__(ref|simd128|relaxed)$/;

/**
 * The export names of a module, read from its export section (so that builds this runtime cannot
 * compile, such as the relaxed one under Node 20, can be listed too).
 * @param {Uint8Array} bytes
 * @returns {string[]}
 */
function exportNames(bytes) {
  let p = 8;
  const leb = () => {
    let v = 0,
      shift = 0,
      b;
    do {
      b = bytes[p++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return v;
  };
  while (p < bytes.length) {
    const id = bytes[p++];
    const size = leb();
    const end = p + size;
    if (id === 7) {
      const names = [];
      for (let n = leb(); n > 0; n--) {
        const len = leb();
        names.push(new TextDecoder().decode(bytes.subarray(p, p + len)));
        p += len + 1; // the kind byte
        leb(); // the index
      }
      return names;
    }
    p = end;
  }
  return [];
}

for (const b of BUILDS) {
  test(`${b}: the packaged module exports the public kernels only, the test variant every kernel`, () => {
    const pub = exportNames(packaged(b));
    const all = exportNames(readFileSync(testWasmFile(b)));
    assert.deepEqual(
      pub.filter((n) => ISA_NAME.test(n)),
      [],
      'no __ref / __simd128 / __relaxed export in the packaged module',
    );
    assert.ok(pub.includes('bq_build_info') && pub.includes('bq_q4_0_dequantize'), pub.slice(0, 10).join(' '));
    // The public API is the same: the test variant adds only ISA-suffixed names.
    assert.deepEqual(all.filter((n) => !ISA_NAME.test(n)).sort(), [...pub].sort());
    const isa = all.filter((n) => ISA_NAME.test(n));
    assert.ok(
      isa.some((n) => n.endsWith('__ref')),
      'the test variant exports the reference kernels',
    );
    if (b !== 'scalar')
      assert.ok(
        isa.some((n) => n.endsWith('__simd128')),
        'and the SIMD128 kernels',
      );
    if (b === 'relaxed' || b === 'relaxed-threads')
      assert.ok(
        isa.some((n) => n.endsWith('__relaxed')),
        'and the relaxed kernels',
      );
  });
}

test('relaxed-threads: the same JS ABI as the threads build, plus the relaxed probe', () => {
  const threads = exportNames(packaged('threads'));
  const rthreads = exportNames(packaged('relaxed-threads'));
  for (const n of ['bq_thread_scratch_bytes', 'bq_thread_scratch_init', '__wasm_init_tls', '__stack_pointer'])
    assert.ok(rthreads.includes(n), n);
  assert.deepEqual([...rthreads].sort(), [...threads, 'bq_relaxed_probe'].sort());
});

test('bq_build_info says which build and variant a module is', async () => {
  /** @type {[string, Uint8Array, object][]} */
  const cases = [];
  for (const b of /** @type {const} */ (['simd128', 'scalar'])) {
    cases.push([`packaged ${b}`, packaged(b), { backend: b, sharedMemory: false, testExports: false }]);
    cases.push([`test ${b}`, readFileSync(testWasmFile(b)), { backend: b, sharedMemory: false, testExports: true }]);
  }
  for (const [name, bytes, want] of cases) {
    assert.deepEqual(buildInfo(await instantiate(new WebAssembly.Module(bytes))), want, name);
  }
  // The threads build runs on a memory it imports, shared by the workers' instances.
  for (const [name, bytes, testExports] of /** @type {const} */ ([
    ['packaged threads', packaged('threads'), false],
    ['test threads', readFileSync(testWasmFile('threads')), true],
  ])) {
    const memory = new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true });
    const { instance } = await WebAssembly.instantiate(bytes, { env: { memory } });
    assert.deepEqual(buildInfo(instance), { backend: 'simd128', sharedMemory: true, testExports }, name);
  }
});

test('init takes a test variant as a module, and reports its build', async () => {
  for (const b of /** @type {const} */ (['simd128', 'scalar'])) {
    const bq = await init({ backend: b, module: readFileSync(testWasmFile(b)) });
    assert.equal(bq.backend, b);
    assert.equal(typeof (/** @type {any} */ (bq.exports)[`bq_q4_0_dequantize__ref`]), 'function');
    const plain = await init({ backend: b });
    assert.equal(plain.backend, b);
    assert.equal(/** @type {any} */ (plain.exports)[`bq_q4_0_dequantize__ref`], undefined);
    assert.deepEqual(
      plain.dequantize('q4_0', bq.quantize('q4_0', new Float32Array(32).fill(1))),
      new Float32Array(32).fill(1),
    );
  }
  // A module that is not a blockquant build is refused before it is instantiated.
  const notOurs = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
  await assert.rejects(init({ module: notOurs }), /not a blockquant build \(no bq_build_info \/ memory export\)/);
});
