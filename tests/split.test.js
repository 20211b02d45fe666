// The split layout (init({ layout: 'split' }), src/modules.inc): a core with the type table and
// the decoders of the plain types, and side modules placed in its memory on first use. With only
// the core loaded, the core's types decode as ggml decodes them and every call whose kernel lives
// in another module throws MODULE_NOT_LOADED naming it; after enable() each module's kernels give
// ggml's bytes (quantize, quantize with an importance matrix, the grid types' decoders) and the
// whole build's results (dots, matvecs, stats). The async decoders load the module a tensor needs
// themselves. Run on the build under test (BQ_BACKEND); the relaxed build's modules are checked
// for their exports here and run in Chromium by the e2e tests of that build. Seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import * as ggml from './lib/ggml.js';
import { hostileRows, imatrix } from './lib/rows.js';
import { BACKEND, SEED, codec, testCodec } from './lib/helpers.js';
import { init, typeInfo, typeId, CODEC_TYPES, writeGGUF, parseGGUF, GGMLType, quantizeModel } from '../js/node.js';
import { makeModel } from './lib/models.js';
import { MODULES, OP_MODULES, GRID_TYPES, ACTIVATION_TYPES } from '../js/gen/modules.js';
import { BlockquantError, moduleOfKernel } from '../js/side.js';
import { dylinkInfo } from '../js/side-load.js';

console.log(`# split test, ${BACKEND} build, seed ${SEED}`);

const split = () => init({ backend: BACKEND, layout: 'split' });
const whole = await codec();
const full = await testCodec();
const SIDES = MODULES.map((m) => m.name).filter((n) => n !== 'core');
const TYPES = CODEC_TYPES.map((id) => ({ ...typeInfo(id), id }));
const isGrid = (/** @type {{ name: string }} */ t) => GRID_TYPES.includes(t.name);

/** @param {unknown} e @param {string} module @param {string} type */
const notLoaded = (e, module, type) =>
  e instanceof BlockquantError &&
  e.code === 'MODULE_NOT_LOADED' &&
  e.message === `type ${type} needs module '${module}': await bq.enable('${module}')`;

/** Seeded rows of values, and an importance vector. */
function input(cols, rows, seed) {
  return { x: hostileRows(rows, cols, seed).x.map((v) => (Number.isFinite(v) ? v : 0)), w: imatrix(cols, 0, seed) };
}

test('the module list: every module is a file of each build, and bundled-split.js names each', () => {
  const urls = readFileSync(new URL('../js/bundled-split.js', import.meta.url), 'utf8');
  const workerd = readFileSync(new URL('../js/bundled-workerd-split.js', import.meta.url), 'utf8');
  for (const b of ['simd128', 'scalar'])
    for (const { name } of MODULES) {
      assert.ok(
        workerd.includes(`import ${b}_${name} from '../wasm/blockquant-${b}-${name}.wasm';`),
        `workerd ${b}-${name}`,
      );
      assert.ok(workerd.includes(`'${b}-${name}': ${b}_${name},`), `workerd ${b}-${name}`);
    }
  for (const b of ['scalar', 'simd128', 'relaxed'])
    for (const { name } of MODULES) {
      const file = new URL(`../wasm/blockquant-${b}-${name}.wasm`, import.meta.url);
      assert.ok(existsSync(file), `${file} is missing (make split)`);
      assert.ok(
        urls.includes(`'${b}-${name}': () => new URL('../wasm/blockquant-${b}-${name}.wasm', import.meta.url)`),
        `${b}-${name}`,
      );
    }
  // Each export of the whole build is in exactly the module the rule gives it (on the builds this
  // runtime compiles; Node has no relaxed SIMD).
  for (const b of ['scalar', 'simd128']) {
    const names = (/** @type {string} */ n) =>
      WebAssembly.Module.exports(
        new WebAssembly.Module(readFileSync(new URL(`../wasm/blockquant-${b}-${n}.wasm`, import.meta.url))),
      )
        .map((e) => e.name)
        .filter((e) => e.startsWith('bq_'));
    const wholeNames = WebAssembly.Module.exports(
      new WebAssembly.Module(readFileSync(new URL(`../wasm/blockquant-${b}.wasm`, import.meta.url))),
    )
      .map((e) => e.name)
      .filter((e) => e.startsWith('bq_'));
    const seen = new Set();
    for (const { name } of MODULES) {
      if (name !== 'core') {
        const bytes = readFileSync(new URL(`../wasm/blockquant-${b}-${name}.wasm`, import.meta.url));
        const m = new WebAssembly.Module(bytes);
        assert.ok(dylinkInfo(m).memSize > 0, `${b}-${name} is a side module`);
        // tools/trim-data.mjs: no zero tail of bss in the file (the data segment is its end)
        assert.notEqual(bytes.at(-1), 0, `${b}-${name} ends in zeros`);
      }
      for (const e of names(name)) {
        const also = name === 'dot' && ACTIVATION_TYPES.some((t) => e === `bq_${t}_quantize`);
        if (!also)
          assert.equal(
            moduleOfKernel(e)?.module ?? (e.startsWith('bq_acc_sum') ? 'dot' : 'core'),
            name,
            `${b}: ${e} in ${name}`,
          );
        seen.add(e);
      }
    }
    assert.deepEqual(
      [...seen].sort(),
      [...wholeNames].sort(),
      `${b}: the modules together export what the whole build does`,
    );
  }
});

test("typeInfo(t).modules names, for each kernel of the type, the module whose file exports it; a codec's typeInfo says what it has loaded", async () => {
  // Read from the built files, not from the rule: each op's kernels of each type, per module file.
  for (const b of ['scalar', 'simd128']) {
    /** @type {Map<string, Set<string>>} kernel name -> the modules exporting it */
    const where = new Map();
    for (const { name } of MODULES)
      for (const e of WebAssembly.Module.exports(
        new WebAssembly.Module(readFileSync(new URL(`../wasm/blockquant-${b}-${name}.wasm`, import.meta.url))),
      ))
        if (e.name.startsWith('bq_')) where.set(e.name, (where.get(e.name) ?? new Set()).add(name));
    for (const id of CODEC_TYPES) {
      const info = typeInfo(id);
      for (const op of ['dequantize', 'quantize', 'quantize_rows', 'dot', 'matvec', 'stats']) {
        const re = new RegExp(`^bq_${info.name}_${op}(_|$)`);
        const kernels = [...where.keys()].filter(
          (k) => re.test(k) && !(op === 'quantize' && k.startsWith(`bq_${info.name}_quantize_rows`)),
        );
        const mods = new Set(kernels.flatMap((k) => [.../** @type {Set<string>} */ (where.get(k))]));
        // an activation type's quantizer is in 'dot' as well as in 'quant' (matvec quantizes to it)
        if (op === 'quantize' && ACTIVATION_TYPES.includes(info.name)) mods.delete('dot');
        const m = /** @type {Record<string, string | undefined>} */ (info.modules)[op];
        if (m === undefined) assert.equal(kernels.length, 0, `${b}: ${info.name} ${op}: ${kernels.join(', ')}`);
        else assert.deepEqual([...mods], [m], `${b}: ${info.name} ${op}`);
      }
    }
  }
  assert.deepEqual(typeInfo('iq2_xs').modules, {
    dequantize: 'grid',
    quantize_rows: 'imat',
    dot: 'grid',
    matvec: 'grid',
  });
  assert.deepEqual(typeInfo('q4_K').modules, {
    dequantize: 'core',
    quantize: 'quant',
    quantize_rows: 'imat',
    dot: 'dot',
    matvec: 'dot',
    stats: 'quant',
  });
  assert.deepEqual(typeInfo('i32').modules, {});

  const bq = await split();
  assert.deepEqual(bq.typeInfo('iq2_xs').loaded, {
    dequantize: false,
    quantize_rows: false,
    dot: false,
    matvec: false,
  });
  assert.deepEqual(bq.typeInfo('q4_0').loaded, {
    dequantize: true,
    quantize: false,
    quantize_rows: false,
    dot: false,
    matvec: false,
    stats: false,
  });
  await bq.enable('grid');
  assert.deepEqual(bq.typeInfo('iq2_xs').loaded, { dequantize: true, quantize_rows: false, dot: true, matvec: true });
  assert.equal(bq.typeInfo('iq2_xs').blockSize, 256);
  for (const id of CODEC_TYPES)
    assert.ok(
      Object.values(whole.typeInfo(id).loaded).every((v) => v === true),
      `whole build: ${id}`,
    );
  assert.throws(() => bq.typeInfo('q9_9'), TypeError);
});

test('with only the core: the plain types decode as ggml does; other kernels throw MODULE_NOT_LOADED', async () => {
  const bq = await split();
  assert.deepEqual(
    bq.modules.map((m) => [m.name, m.loaded]),
    MODULES.map((m) => [m.name, m.name === 'core']),
  );
  const quantizable = TYPES.filter((t) => t.quantize && t.blockSize > 1 && !['q8_1', 'q8_K'].includes(t.name));
  const { x, w } = input(512, 1, SEED);
  const qs = ggml.quantize(
    quantizable.map((t) => ({ type: t.id, x, cols: 512, imatrix: t.requiresImatrix ? w : null })),
  );
  const want = ggml.dequantize(
    quantizable.map((t, i) => ({ type: t.id, q: /** @type {Uint8Array} */ (qs[i]), n: 512 })),
  );
  quantizable.forEach((t, i) => {
    const q = /** @type {Uint8Array} */ (qs[i]);
    if (isGrid(t)) {
      assert.throws(
        () => bq.dequantize(t.name, q),
        (e) => notLoaded(e, 'grid', t.name),
        t.name,
      );
      return;
    }
    assert.deepEqual(new Uint32Array(bq.dequantize(t.name, q).buffer), new Uint32Array(want[i].buffer), t.name);
    assert.throws(
      () => bq.quantize(t.name, x),
      (e) => notLoaded(e, OP_MODULES.quantize[0], t.name),
      t.name,
    );
  });
  const a = whole.quantize('q4_K', x);
  const b = whole.quantize('q8_K', x);
  assert.throws(
    () => bq.dot('q4_K', a, 'q8_K', b),
    (e) => notLoaded(e, 'dot', 'q4_K'),
  );
  assert.throws(
    () => bq.matvec('q4_K', a, 1, x),
    (e) => notLoaded(e, 'dot', 'q4_K'),
  );
  assert.throws(
    () => bq.blockStats('q4_K', x),
    (e) => notLoaded(e, 'quant', 'q4_K'),
  );
  // 'dot' alone serves matvec: it has the quantizers of the vector's types too
  const dots = await split();
  await dots.enable('dot');
  assert.deepEqual(dots.matvec('q4_K', a, 1, x), full.matvec('q4_K', a, 1, x));
  assert.throws(
    () => dots.quantize('q4_K', x),
    (e) => notLoaded(e, 'quant', 'q4_K'),
  );
  assert.throws(
    () => bq.quantize('iq2_xs', x, { imatrix: input(512, 1, SEED).w }),
    (e) => notLoaded(e, 'imat', 'iq2_xs'),
  );
  await assert.rejects(bq.enable('nope'), TypeError);
  assert.deepEqual(bq.moduleOf('q4_K'), { module: 'core', loaded: true });
  assert.deepEqual(bq.moduleOf('iq2_xs'), { module: 'grid', loaded: false });
  assert.deepEqual(bq.moduleOf('q4_K', 'quantize_rows'), { module: 'imat', loaded: false });
  assert.deepEqual(bq.moduleOf('q8_0', 'matvec'), { module: 'dot', loaded: false });
  assert.throws(() => bq.moduleOf('q4_K', /** @type {any} */ ('nope')), TypeError);
  assert.deepEqual(whole.moduleOf('iq2_xs', 'quantize_rows'), { module: 'imat', loaded: true });
});

test("after enable(): every module gives ggml's bytes and the whole build's results", async () => {
  const bq = await split();
  await bq.enable(...SIDES);
  assert.ok(bq.modules.every((m) => m.loaded));
  await bq.enable('grid'); // again: a no-op
  const cols = 512;
  const { x, w } = input(cols, 3, SEED + 1);
  const plain = TYPES.filter(
    (t) => t.quantize && !t.requiresImatrix && t.blockSize > 1 && !['q8_1', 'q8_K'].includes(t.name),
  );
  const rows = TYPES.filter((t) => t.weighted);
  const cases = [...plain.map((t) => ({ t, imatrix: null })), ...rows.map((t) => ({ t, imatrix: w }))];
  const want = ggml.quantize(cases.map((c) => ({ type: c.t.id, x, cols, imatrix: c.imatrix })));
  cases.forEach((c, i) => {
    const opts = c.imatrix ? { imatrix: c.imatrix, rowLength: cols } : { rowLength: cols };
    if (want[i] === null) return assert.throws(() => bq.quantize(c.t.name, x, opts), c.t.name);
    const got = bq.quantize(c.t.name, x, opts);
    assert.deepEqual(got, want[i], `${c.t.name}${c.imatrix ? ' with an importance matrix' : ''}`);
    // decoders (the grid types' from the grid module) as ggml's, and dots, matvecs, stats as the whole build's
    assert.deepEqual(
      new Uint32Array(bq.dequantize(c.t.name, got).buffer),
      new Uint32Array(full.dequantize(c.t.name, got).buffer),
      c.t.name,
    );
    if (c.t.dot && c.t.vecDot >= 0) {
      const vt = typeInfo(c.t.vecDot).name;
      const y = vt === 'f32' ? x : full.quantize(vt, x);
      assert.equal(bq.dot(c.t.name, got, vt, y), full.dot(c.t.name, got, vt, y), `${c.t.name} dot`);
      const xv = x.subarray(0, cols);
      assert.deepEqual(bq.matvec(c.t.name, got, 3, xv), full.matvec(c.t.name, got, 3, xv), `${c.t.name} matvec`);
    }
    if (c.t.stats) assert.deepEqual(bq.blockStats(c.t.name, x), full.blockStats(c.t.name, x), `${c.t.name} stats`);
  });
});

test('the async decoders load the module a tensor needs', async () => {
  const x = input(256, 2, SEED + 2).x;
  const q = whole.quantize('iq2_xs', x, { imatrix: input(256, 1, SEED).w, rowLength: 256 });
  const file = parseGGUF(writeGGUF({ tensors: [{ name: 'g', type: GGMLType.IQ2_XS, dims: [256, 2], data: q }] }));
  const bq = await split();
  assert.equal(bq.modules.find((m) => m.name === 'grid')?.loaded, false);
  const got = await bq.dequantizeTensor(file, 'g');
  assert.equal(bq.modules.find((m) => m.name === 'grid')?.loaded, true);
  assert.deepEqual(got, whole.dequantize('iq2_xs', q));
  // The modules' memory is the codec's, not a tensor's.
  assert.equal(bq.residentBytes, 0);
  assert.equal(typeId('iq2_xs'), GGMLType.IQ2_XS);
});

test('quantizeModel with a codec of the split layout loads what it needs: the same file as with the whole build', async () => {
  const model = makeModel({ seed: SEED % 1000 });
  /** @param {any} codec */
  const written = async (codec) => {
    /** @type {Uint8Array[]} */
    const parts = [];
    await quantizeModel(model.bytes, (/** @type {Uint8Array} */ c) => void parts.push(c.slice()), {
      ftype: 'Q4_K_M',
      codec,
    });
    return Buffer.concat(parts);
  };
  const bq = await split();
  const got = await written(bq);
  assert.ok(got.equals(await written(whole)), 'the files differ');
  assert.deepEqual(
    bq.modules.filter((m) => m.loaded).map((m) => m.name),
    ['core', 'quant', 'grid', 'imat'],
  );
});

test('the threads build is whole: its codec has every module loaded, and enable() is a no-op', async () => {
  const bq = await init({ threads: 2 });
  try {
    assert.ok(bq.modules.every((m) => m.loaded));
    await bq.enable('grid', 'imat');
    assert.deepEqual(bq.moduleOf('iq2_xs'), { module: 'grid', loaded: true });
    assert.deepEqual(bq.typeInfo('iq2_xs').loaded, { dequantize: true, quantize_rows: true, dot: true, matvec: true });
  } finally {
    await /** @type {any} */ (bq).close?.();
  }
});

test("initWith's split default: the split layout where its modules load, else the whole build; an explicit layout is kept", async () => {
  const { initWith } = await import('../js/init.js');
  const files = await import('../js/bundled-file.js');
  const missing = () => Promise.reject(new Error('cannot fetch the core'));
  const loaded = (/** @type {import('../js/codec.js').Codec} */ c) => c.modules.every((m) => m.loaded);
  const opts = { backend: BACKEND };
  // The browsers' entry: split where the core loads.
  const s = await initWith(opts, files.bundledModule, files.splitModule, 'split');
  assert.equal(loaded(s), false);
  assert.equal(s.moduleOf('q4_K', 'quantize').loaded, false);
  // A bundle without the modules: the whole build, every module loaded.
  const w = await initWith(opts, files.bundledModule, missing, 'split');
  assert.equal(loaded(w), true);
  assert.equal(w.backend, s.backend);
  // An explicit layout is not second-guessed: split fails as its loader fails, whole stays whole.
  await assert.rejects(
    initWith({ ...opts, layout: 'split' }, files.bundledModule, missing, 'split'),
    /cannot fetch the core/,
  );
  assert.equal(
    loaded(await initWith({ ...opts, layout: 'whole' }, files.bundledModule, files.splitModule, 'split')),
    true,
  );
  // The other entries' default: whole.
  assert.equal(loaded(await initWith(opts, files.bundledModule, files.splitModule)), true);
  // A bad option is reported as itself, not hidden by the fallback.
  await assert.rejects(
    initWith({ ...opts, stagingBytes: 1 }, files.bundledModule, files.splitModule, 'split'),
    RangeError,
  );
});
