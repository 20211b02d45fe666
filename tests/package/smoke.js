// The package smoke script: runs unchanged in Node, Deno, Bun, workerd, browser pages and module
// workers, against the installed package (passed in as its module namespace). It checks each
// result against bounds and identities written here, and returns a digest of every output so the
// test can also require the same bytes from every runtime.

const TYPES = ['f32', 'f16', 'bf16', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0', 'q8_1'];
// Largest error of a round trip, relative to the block's largest |x| (q*_0, q8_1, floats) or to
// its range max - min (q4_1, q5_1), before float rounding: half a step, except Q4_0/Q5_0, whose
// scale maps the signed extreme to -8 (-16), so its negation clamps to 7 (15), a whole step off.
const STEP = { q4_0: 1 / 8, q4_1: 1 / 30, q5_0: 1 / 16, q5_1: 1 / 62, q8_0: 1 / 254, q8_1: 1 / 254 };
const REL = { f32: 0, f16: 2 ** -11, bf16: 2 ** -8 };
const PAIRS = [
  ['q4_0', 'q8_0'],
  ['q4_1', 'q8_1'],
  ['q5_0', 'q8_0'],
  ['q5_1', 'q8_1'],
  ['q8_0', 'q8_0'],
];
const N = 1024;

/** FNV-1a over the bytes of a typed array or a number, folded into a running hex digest. */
function hasher() {
  let h = 0x811c9dc5;
  /** @param {ArrayBufferView | number} v */
  const add = (v) => {
    const b =
      typeof v === 'number'
        ? new Uint8Array(new Float64Array([v]).buffer)
        : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i], 0x01000193) >>> 0;
  };
  return { add, hex: () => h.toString(16).padStart(8, '0') };
}

/**
 * @param {any} lib the package's module namespace
 * @param {object} [opts]
 * @param {object} [opts.init] options for init
 */
export async function smoke(lib, opts = {}) {
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const bq = await lib.init(opts.init);
  // The layout init chose (split from the browsers' entry, whole elsewhere); then every module, so
  // the same calls run on either.
  const layout = bq.modules.every((/** @type {{ loaded: boolean }} */ m) => m.loaded) ? 'whole' : 'split';
  await bq.enable(
    ...bq.modules
      .filter((/** @type {{ loaded: boolean }} */ m) => !m.loaded)
      .map((/** @type {{ name: string }} */ m) => m.name),
  );
  const digest = hasher();
  // Deterministic inputs with a spread of magnitudes and both signs.
  const x = new Float32Array(N).map((_, i) => Math.sin(i * 0.37) * (1 + (i % 32)) * (i % 3 === 0 ? -0.01 : 1));

  for (const t of TYPES) {
    const q = bq.quantize(t, x);
    const y = bq.dequantize(t, q);
    digest.add(q);
    digest.add(y);
    check(y.length === N, `${t}: dequantize gave ${y.length} values`);
    for (let b = 0; b < N; b += 32) {
      let amax = 0,
        lo = Infinity,
        hi = -Infinity,
        err = 0;
      for (let i = b; i < b + 32; i++) {
        amax = Math.max(amax, Math.abs(x[i]));
        lo = Math.min(lo, x[i]);
        hi = Math.max(hi, x[i]);
        err = Math.max(err, Math.abs(x[i] - y[i]));
      }
      const bound =
        t in REL ? amax * REL[t] : (t === 'q4_1' || t === 'q5_1' ? hi - lo : amax) * STEP[t] * 1.01 + amax * 2 ** -10;
      if (!(err <= bound)) {
        check(false, `${t}: block ${b / 32} error ${err} > ${bound}`);
        break;
      }
    }
  }

  const v = new Float32Array(N / 4).map((_, i) => Math.cos(i * 0.11));
  for (const [t, a] of PAIRS) {
    const q = bq.quantize(t, x);
    const qa = bq.quantize(a, x);
    const d = bq.dot(t, q, a, qa);
    // The same dot from the decoded values, summed here in f64.
    const dx = bq.dequantize(t, q),
      da = bq.dequantize(a, qa);
    let ref = 0,
      mag = 0;
    for (let i = 0; i < N; i++) {
      ref += dx[i] * da[i];
      mag += Math.abs(dx[i] * da[i]);
    }
    check(Math.abs(d - ref) <= 1e-5 * mag, `${t}.${a}: dot ${d}, decoded values give ${ref}`);
    digest.add(d);
    const df = bq.dot(t, q, 'f32', x);
    let reff = 0;
    for (let i = 0; i < N; i++) reff += dx[i] * x[i];
    check(Math.abs(df - reff) <= 1e-5 * mag, `${t}.f32: dot ${df}, decoded values give ${reff}`);
    digest.add(df);
    // 4 rows of 256: each row of the matvec equals the dot of that row with v quantized.
    const rows = 4;
    const y = bq.matvec(t, q, rows, v);
    const qv = bq.quantize(a === 'q8_1' ? 'q8_1' : 'q8_0', v);
    const rowBytes = q.length / rows;
    for (let r = 0; r < rows; r++) {
      const dr = bq.dot(t, q.subarray(r * rowBytes, (r + 1) * rowBytes), a, qv);
      check(Object.is(y[r], Math.fround(dr)), `${t}: matvec row ${r} ${y[r]} != dot ${dr}`);
    }
    digest.add(y);
  }

  // GGUF: write, parse, open from a Blob, dequantize a tensor through the file.
  const q40 = bq.quantize('q4_0', x);
  const file = lib.writeGGUF({
    kv: [
      { key: 'general.architecture', type: lib.GGUFValueType.STRING, value: 'smoke' },
      { key: 'smoke.n', type: lib.GGUFValueType.UINT32, value: 7 },
    ],
    tensors: [
      { name: 'w.q4_0', type: lib.GGMLType.Q4_0, dims: [256, 4], data: q40 },
      { name: 'w.f32', type: lib.GGMLType.F32, dims: [N], data: new Uint8Array(x.buffer) },
    ],
  });
  digest.add(file);
  const g = lib.parseGGUF(file);
  check(g.metadata.get('general.architecture') === 'smoke', 'parseGGUF: architecture');
  check(g.metadata.get('smoke.n') === 7, 'parseGGUF: smoke.n');
  check(g.tensors.map((t) => t.name).join() === 'w.q4_0,w.f32', 'parseGGUF: tensor names');
  const tb = g.tensorBytes('w.q4_0');
  check(tb.length === q40.length && tb.every((b, i) => b === q40[i]), 'parseGGUF: tensor bytes');
  const f = await lib.openGGUF(new Blob([file]));
  const viaFile = await bq.dequantizeTensor(f, 'w.q4_0');
  const direct = bq.dequantize('q4_0', q40);
  check(viaFile.length === N && viaFile.every((z, i) => Object.is(z, direct[i])), 'openGGUF(Blob) -> dequantizeTensor');
  const f32 = await bq.dequantizeTensor(f, 'w.f32');
  check(
    f32.every((z, i) => Object.is(z, x[i])),
    'dequantizeTensor f32',
  );
  let bad = '';
  try {
    lib.parseGGUF(file.subarray(0, 20));
  } catch (e) {
    bad = e instanceof lib.GGUFError ? 'GGUFError' : String(e);
  }
  check(bad === 'GGUFError', `a truncated file throws GGUFError, got ${bad || 'nothing'}`);

  return { backend: bq.backend, layout, digest: digest.hex(), failures };
}

/**
 * init({ threads: 2 }) where this runtime allows: matvec on a handle and on bytes, dequantize and
 * quantize equal the one-thread SIMD128 codec's results bit for bit. Returns the thread count it
 * got (1 where threads cannot run: no shared memory, not cross-origin isolated, no workers).
 * @param {any} lib the package's module namespace
 */
export async function smokeThreads(lib) {
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const same = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
  const one = await lib.init({ backend: 'simd128', layout: 'whole' });
  const bq = await lib.init({ threads: 2, minSplitBytes: 0 });
  const rows = 96,
    cols = 1024;
  const w = new Float32Array(rows * cols).map((_, i) => Math.sin(i * 0.013) * (1 + (i % 7)));
  const x = new Float32Array(cols).map((_, i) => Math.cos(i * 0.07));
  for (const t of ['q4_0', 'q8_0', 'q4_K']) {
    const q = one.quantize(t, w);
    check(same(await bq.quantize(t, w), q), `${t}: quantize on ${bq.threads} threads`);
    check(same(await bq.dequantize(t, q), one.dequantize(t, q)), `${t}: dequantize on ${bq.threads} threads`);
    const want = one.matvec(t, q, rows, x);
    check(same(await bq.matvec(t, q, rows, x), want), `${t}: matvec (bytes) on ${bq.threads} threads`);
    const W = bq.tensor(t, q, rows, cols);
    for (let r = 0; r < 20; r++) check(same(await bq.matvec(W, x), want), `${t}: matvec (handle) call ${r}`);
    W.dispose();
  }
  const threads = bq.threads;
  if (threads > 1) await bq.close();
  return { threads, failures };
}

/**
 * init({ layout: 'split' }): the core alone decodes Q4_K; a grid type's decoder and a quantizer
 * throw MODULE_NOT_LOADED naming their module; after enable() (and, for the grid module, after a
 * dequantizeTensor that loads it itself) the bytes equal the whole build's, including an IQ2_XS
 * quantize with an importance matrix.
 * @param {any} lib the package's module namespace
 */
export async function smokeSplit(lib) {
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const same = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
  const whole = await lib.init({ layout: 'whole' });
  const bq = await lib.init({ layout: 'split' });
  check(bq.backend === whole.backend, `split layout on ${bq.backend}, whole on ${whole.backend}`);
  const x = new Float32Array(2048).map((_, i) => Math.sin(i * 0.37) * (1 + (i % 32)));
  const w = new Float32Array(256).map((_, i) => 1 + (i % 5));
  const q4k = whole.quantize('q4_K', x);
  check(same(bq.dequantize('q4_K', q4k), whole.dequantize('q4_K', q4k)), 'core: q4_K dequantize');
  const iq = whole.quantize('iq2_xs', x, { imatrix: w, rowLength: 256 });
  const code = (f) => {
    try {
      f();
      return 'no error';
    } catch (e) {
      return `${e.code}: ${e.message}`;
    }
  };
  const want = (m, t) => `MODULE_NOT_LOADED: type ${t} needs module '${m}': await bq.enable('${m}')`;
  check(
    code(() => bq.dequantize('iq2_xs', iq)) === want('grid', 'iq2_xs'),
    code(() => bq.dequantize('iq2_xs', iq)),
  );
  check(
    code(() => bq.quantize('q4_K', x)) === want('quant', 'q4_K'),
    code(() => bq.quantize('q4_K', x)),
  );
  const file = lib.parseGGUF(
    lib.writeGGUF({ tensors: [{ name: 'g', type: lib.GGMLType.IQ2_XS, dims: [256, 8], data: iq }] }),
  );
  check(same(await bq.dequantizeTensor(file, 'g'), whole.dequantize('iq2_xs', iq)), 'grid: loaded by dequantizeTensor');
  await bq.enable('quant', 'imat', 'dot');
  check(same(bq.quantize('q4_K', x), q4k), 'quant: q4_K quantize');
  check(same(bq.quantize('iq2_xs', x, { imatrix: w, rowLength: 256 }), iq), 'imat: iq2_xs quantize with an imatrix');
  const v = new Float32Array(256).map((_, i) => Math.cos(i * 0.1));
  check(same(bq.matvec('q4_K', q4k, 8, v), whole.matvec('q4_K', q4k, 8, v)), 'dot: q4_K matvec');
  check(
    bq.modules.every((m) => m.loaded),
    'every module loaded',
  );
  return { backend: bq.backend, failures };
}
