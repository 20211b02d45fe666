// Runs in headless Chromium (tests/relaxed.test.js, bench/relaxed.js): loads the relaxed build
// through the public API and checks every __relaxed kernel it exports against the same build's
// __simd128 kernel (bit for bit), its __ref kernel (dots within 1e-5 of the sum of |terms|, the
// float terms summed from the blocks here) and, for matvecs, the relaxed dot of each row (bit for
// bit); on random blocks, on edge codes and on non-finite scales. ?bench=1 instead times the
// Q4_0 . Q8_0 matvec, relaxed against simd128. The result goes to window.result (and with ?post=1,
// in a POST to /result).
import { init, CODEC_TYPES, typeInfo } from '../../js/index.js';
import { relaxedProbeThrough } from '../../js/loader.js';

const params = new URLSearchParams(location.search);
const SEED = Number(params.get('seed') ?? 1);

/** xorshift32, seeded. */
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

// Block layouts (ggml's), written out here: bytes per block and where d, m/s, qh and qs are.
const LAYOUT = {
  q4_0: { size: 18, qh: -1, qs: 2, m: -1 },
  q4_1: { size: 20, qh: -1, qs: 4, m: 2 },
  q5_0: { size: 22, qh: 2, qs: 6, m: -1 },
  q5_1: { size: 24, qh: 4, qs: 8, m: 2 },
  q8_0: { size: 34, qh: -1, qs: 2, m: -1 },
  q8_1: { size: 36, qh: -1, qs: 4, m: 2 },
  mxfp4: { size: 17, qh: -1, qs: 1, m: -1 }, // e (an E8M0 exponent), then 16 bytes of nibbles
  iq4_nl: { size: 18, qh: -1, qs: 2, m: -1 },
};
/** The formats whose relaxed kernels move the activations' signs onto the weights (page bench). */
const SIGNED_ACT = new Set(['iq4_nl']);
/** Activation blocks b of type t with every code -128 made -127 (what quantizers give). */
function noMinCodes(t, b) {
  const L = LAYOUT[t];
  for (let o = 0; o < b.length; o += L.size)
    for (let j = L.qs; j < L.qs + 32; j++) if (b[o + j] === 0x80) b[o + j] = 0x81;
  return b;
}
/** The 32-value formats whose terms absTerms forms (the others' bound is absProducts). */
const TERMS = new Set(['q4_0', 'q4_1', 'q5_0', 'q5_1']);

/** binary16 bits -> number */
function half(h) {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    f = h & 1023;
  if (e === 31) return f ? NaN : s * Infinity;
  return e === 0 ? s * f * 2 ** -24 : s * (1024 + f) * 2 ** (e - 25);
}

/** The 32 integer codes of block i of type t in bytes b (offsets folded in: q - 8, q - 16). */
function codes(t, b, i) {
  const L = LAYOUT[t],
    o = i * L.size,
    out = new Array(32);
  if (t.startsWith('q8')) {
    for (let j = 0; j < 32; j++) out[j] = (b[o + L.qs + j] << 24) >> 24;
    return out;
  }
  const qh = L.qh < 0 ? 0 : b[o + L.qh] | (b[o + L.qh + 1] << 8) | (b[o + L.qh + 2] << 16) | (b[o + L.qh + 3] << 24);
  for (let j = 0; j < 16; j++) {
    let lo = b[o + L.qs + j] & 15,
      hi = b[o + L.qs + j] >> 4;
    if (L.qh >= 0) {
      lo |= ((qh >>> j) & 1) << 4;
      hi |= ((qh >>> (j + 16)) & 1) << 4;
    }
    const off = t === 'q4_0' ? 8 : t === 'q5_0' ? 16 : 0;
    out[j] = lo - off;
    out[j + 16] = hi - off;
  }
  return out;
}

/** sum over blocks of |terms| of ggml's dot of x (type t) with y (type t2), or NaN if not finite. */
function absTerms(t, t2, x, y, nb) {
  const L = LAYOUT[t],
    L2 = LAYOUT[t2];
  let s = 0;
  for (let i = 0; i < nb; i++) {
    const a = codes(t, x, i),
      c = codes(t2, y, i);
    let sumi = 0;
    for (let j = 0; j < 32; j++) sumi += a[j] * c[j];
    const dx = half(x[i * L.size] | (x[i * L.size + 1] << 8)),
      dy = half(y[i * L2.size] | (y[i * L2.size + 1] << 8));
    s += Math.abs(dx * dy * sumi);
    if (L.m >= 0) {
      const m = half(x[i * L.size + 2] | (x[i * L.size + 3] << 8)),
        sy = half(y[i * L2.size + 2] | (y[i * L2.size + 3] << 8));
      s += Math.abs(m * sy);
    }
  }
  return s;
}

/** Random blocks: random code bytes; scales finite (kind 'finite'), any bits ('any'), or the
 * extreme codes (kind 'edge': every code byte 0x00, 0xff, 0x80 or 0x7f per block). */
function blocks(t, nb, r, kind) {
  const L = LAYOUT[t],
    b = new Uint8Array(nb * L.size);
  for (let i = 0; i < b.length; i++) b[i] = (r() * 256) | 0;
  for (let i = 0; i < nb; i++) {
    const o = i * L.size;
    if (kind !== 'any') {
      // d (and m or s): exponent 1..20 (|d| between 2^-14 and 2^5), any sign and mantissa
      for (const f of L.m >= 0 ? [0, 2] : [0]) {
        const h = (((r() * 2) | 0) << 15) | ((1 + ((r() * 20) | 0)) << 10) | ((r() * 1024) | 0);
        b[o + f] = h & 255;
        b[o + f + 1] = h >> 8;
      }
    }
    // MXFP4: the scale 2^(e - 128) between 2^-28 and 2^2
    if (t === 'mxfp4' && kind !== 'any') b[o] = 100 + ((r() * 30) | 0);
    if (kind === 'edge') {
      const v = [0x00, 0xff, 0x80, 0x7f][(r() * 4) | 0];
      b.fill(v, o + (L.qh >= 0 ? L.qh : L.qs), o + L.size);
    }
  }
  return b;
}

// The super-block formats as ggml lays them out: bytes per block, where its fp16 scales are (h:
// byte offsets) and its code bytes (c: the range the edge kind fills). Q4_K: d, dmin, 12 bytes of
// 6-bit scales and mins, 128 bytes of nibbles; Q8_K: f32 d, 256 codes, 16 i16 sums of 16 codes.
const K = { q2_K: 84, q3_K: 110, q4_K: 144, q5_K: 176, q6_K: 210, iq4_xs: 136, tq2_0: 66, q8_K: 292 };
/** @type {Record<string, { h: number[], c: [number, number] }>} */
const KF = {
  q2_K: { h: [80, 82], c: [16, 80] },
  q3_K: { h: [108], c: [0, 96] },
  q4_K: { h: [0, 2], c: [16, 144] },
  q5_K: { h: [0, 2], c: [16, 176] },
  q6_K: { h: [208], c: [0, 192] },
  iq4_xs: { h: [0], c: [8, 136] },
  tq2_0: { h: [64], c: [0, 64] },
};

/** Scale j and min j (0..7) of the Q4_K block at o. */
function q4kScale(b, o, j) {
  const s = (i) => b[o + 4 + i];
  return j < 4
    ? [s(j) & 63, s(j + 4) & 63]
    : [(s(j + 4) & 15) | ((s(j - 4) >> 6) << 4), (s(j + 4) >> 4) | ((s(j) >> 6) << 4)];
}

/** Random super-blocks of t, kinds as blocks(); Q8_K sums are the codes' sums unless 'any'. */
function blocksK(t, nb, r, kind) {
  const b = new Uint8Array(nb * K[t]);
  for (let i = 0; i < b.length; i++) b[i] = (r() * 256) | 0;
  const dv = new DataView(b.buffer);
  for (let i = 0; i < nb; i++) {
    const o = i * K[t];
    const edge = [0x00, 0xff, 0x80, 0x7f][(r() * 4) | 0];
    if (t !== 'q8_K') {
      const f = KF[t];
      if (kind !== 'any')
        for (const h of f.h)
          dv.setUint16(o + h, (((r() * 2) | 0) << 15) | ((1 + ((r() * 20) | 0)) << 10) | ((r() * 1024) | 0), true);
      if (kind === 'edge') b.fill(edge, o + f.c[0], o + f.c[1]);
    } else {
      if (kind !== 'any') dv.setFloat32(o, (r() - 0.5) * 2 ** (((r() * 20) | 0) - 10), true);
      if (kind === 'edge') b.fill(edge, o + 4, o + 260);
      if (kind !== 'any')
        for (let g = 0; g < 16; g++) {
          let sum = 0;
          for (let j = 0; j < 16; j++) sum += (b[o + 4 + 16 * g + j] << 24) >> 24;
          dv.setInt16(o + 260 + 2 * g, sum, true);
        }
    }
  }
  return b;
}

/** sum over super-blocks of |terms| of ggml's Q4_K . Q8_K dot: per sub-block j,
 * |d yd sc_j sum(q a)| and |dmin yd m_j (its two Q8_K sums)|. */
function absTermsK(w, x, nb) {
  const dw = new DataView(w.buffer, w.byteOffset),
    dx = new DataView(x.buffer, x.byteOffset);
  let s = 0;
  for (let i = 0; i < nb; i++) {
    const o = i * 144,
      ox = i * 292;
    const d = half(dw.getUint16(o, true)),
      dmin = half(dw.getUint16(o + 2, true)),
      yd = dx.getFloat32(ox, true);
    for (let j = 0; j < 8; j++) {
      const [sc, m] = q4kScale(w, o, j);
      let sumi = 0;
      for (let e = 32 * j; e < 32 * j + 32; e++) {
        const q = (w[o + 16 + 32 * Math.floor(e / 64) + (e % 32)] >> (e % 64 < 32 ? 0 : 4)) & 15;
        sumi += q * dx.getInt8(ox + 4 + e);
      }
      const bs = dx.getInt16(ox + 260 + 4 * j, true) + dx.getInt16(ox + 262 + 4 * j, true);
      s += Math.abs(d * yd * sc * sumi) + Math.abs(dmin * yd * m * bs);
    }
  }
  return s;
}

const sameBits = (a, b) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

/**
 * The test variant of a build (build/test/, `make test-wasm`: the packaged module's objects with
 * every __relaxed, __simd128 and __ref kernel exported): a URL to fetch in a browser, the file's
 * bytes in Deno and Bun.
 * @param {'relaxed' | 'simd128'} build
 */
async function testModule(build) {
  const url = new URL(`../../build/test/blockquant-${build}.wasm`, import.meta.url);
  const g = /** @type {any} */ (globalThis);
  if (g.Deno) return g.Deno.readFile(url);
  if (g.Bun) return new Uint8Array(await g.Bun.file(url.pathname).arrayBuffer());
  return url;
}

async function check() {
  const bq = await init({ backend: 'relaxed', module: await testModule('relaxed') });
  const X = /** @type {Record<string, any>} */ (bq.exports);
  const mem = () => /** @type {WebAssembly.Memory} */ (X.memory);
  let top = X.bq_scratch_base();
  const base = top;
  const alloc = (n) => {
    const p = top;
    top += Math.ceil(Math.max(n, 1) / 64) * 64;
    if (top > mem().buffer.byteLength) mem().grow(Math.ceil((top - mem().buffer.byteLength) / 65536));
    return p;
  };
  const put = (u8) => {
    const p = alloc(u8.length);
    new Uint8Array(mem().buffer, p, u8.length).set(u8);
    return p;
  };
  const lanes = X.bq_acc_lanes();
  const dot = (name, xp, yp, n) => {
    const acc = alloc(4 * lanes);
    new Float32Array(mem().buffer, acc, lanes).fill(0);
    if (X[name](xp, yp, n, acc) !== 0) throw new Error(`${name} returned an error`);
    // The pair's own sum of the kernel's ISA: bq_<t>_dot_<t2>_sum__<isa>.
    return X[name.replace(/__(relaxed|simd128|ref)$/, '_sum__$1')](acc);
  };
  /** sum of |w_e a_e| over the n elements of the blocks wr (type t) and x (t2), each decoded by
   * the build's __ref dequantizer (src/ref/, which the Node suite checks against ggml's): at least
   * the sum of |terms| of ggml's dot, for the formats whose terms this page does not form itself. */
  const absProducts = (t, t2, wr, x, n) => {
    const save = top;
    const wp = put(wr.subarray(0, t in K ? (n / 256) * K[t] : (n / 32) * LAYOUT[t].size)),
      xp = put(x),
      dw = alloc(4 * n),
      dx = alloc(4 * n);
    X[`bq_${t}_dequantize__ref`](wp, dw, n);
    X[`bq_${t2}_dequantize__ref`](xp, dx, n);
    const a = new Float32Array(mem().buffer, dw, n),
      b = new Float32Array(mem().buffer, dx, n);
    let s = 0;
    for (let e = 0; e < n; e++) s += Math.abs(a[e] * b[e]);
    top = save;
    return s;
  };
  const failures = [];
  const kernels = Object.keys(X).filter((k) => k.endsWith('__relaxed') && !/_sum__relaxed$|^bq_acc_sum/.test(k));
  let checks = 0;
  const r = rng(SEED);
  for (const name of kernels) {
    const [, t, op, t2] = /^bq_(\w+?)_(dot|matvec)_(q8_[01K])__relaxed$/.exec(name) ?? [];
    if (!t || !(t in LAYOUT || t in K)) {
      failures.push(`${name}: not a kernel this page knows`);
      continue;
    }
    const base_ = name.slice(0, -'__relaxed'.length);
    const isK = t in K;
    for (const nb of isK ? [1, 2, 3, 4, 5, 9, 33, 600] : [1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 33, 130, 4097]) {
      // The SIGNED_ACT kernels' relaxed path also on activations without -128 ('/-127').
      const kinds = nb > 200 ? ['finite'] : ['finite', 'edge', 'any'];
      for (const kind of SIGNED_ACT.has(t) ? [...kinds, ...kinds.map((k) => `${k}/-127`)] : kinds) {
        top = base;
        const rows = op === 'matvec' ? (nb > 200 ? 3 : 1 + ((r() * 5) | 0)) : 1;
        const bk = kind.replace('/-127', '');
        const w = isK ? blocksK(t, nb * rows, r, bk) : blocks(t, nb * rows, r, bk),
          x0 = isK ? blocksK(t2, nb, r, bk) : blocks(t2, nb, r, bk),
          x = bk === kind ? x0 : noMinCodes(t2, x0);
        const wp = put(w),
          xp = put(x),
          n = nb * (isK ? 256 : 32);
        const rowBytes = nb * (isK ? K[t] : LAYOUT[t].size);
        /** @param {Uint8Array} wr */
        const bound = (wr) =>
          1e-5 *
          (t === 'q4_K'
            ? absTermsK(wr, x, nb)
            : TERMS.has(t)
              ? absTerms(t, t2, wr, x, nb)
              : absProducts(t, t2, wr, x, n));
        const what = `${name} blocks=${nb} rows=${rows} ${kind} seed=${SEED}`;
        if (op === 'dot') {
          const got = dot(name, wp, xp, n),
            simd = dot(`${base_}__simd128`, wp, xp, n),
            ref = dot(`${base_}__ref`, wp, xp, n);
          checks++;
          if (!sameBits(got, simd)) failures.push(`${what}: ${got} != simd128 ${simd}`);
          const b = bound(w);
          if (bk !== 'any' && !(Math.abs(got - ref) <= b)) failures.push(`${what}: ${got} vs ref ${ref}, bound ${b}`);
        } else {
          const yp = alloc(4 * rows),
            ys = alloc(4 * rows),
            yr = alloc(4 * rows);
          for (const [k, out] of [
            [name, yp],
            [`${base_}__simd128`, ys],
            [`${base_}__ref`, yr],
          ])
            if (X[k](wp, rows, n, xp, out) !== 0) failures.push(`${what}: ${k} returned an error`);
          const got = new Float32Array(mem().buffer, yp, rows).slice(),
            simd = new Float32Array(mem().buffer, ys, rows).slice(),
            ref = new Float32Array(mem().buffer, yr, rows).slice();
          for (let row = 0; row < rows; row++) {
            checks++;
            const d = dot(`bq_${t}_dot_${t2}__relaxed`, wp + row * rowBytes, xp, n);
            if (!sameBits(got[row], d)) failures.push(`${what} row ${row}: ${got[row]} != its relaxed dot ${d}`);
            if (!sameBits(got[row], simd[row]))
              failures.push(`${what} row ${row}: ${got[row]} != simd128 ${simd[row]}`);
            const b = bound(w.subarray(row * rowBytes));
            if (bk !== 'any' && !(Math.abs(got[row] - ref[row]) <= b))
              failures.push(`${what} row ${row}: ${got[row]} vs ref ${ref[row]}, bound ${b}`);
          }
        }
        if (failures.length > 20) break;
      }
    }
  }
  const quantized = await checkQuantize(bq, failures);
  const auto = (await init()).backend;
  // The build's own probe export (what runtimes that cannot compile the probe module use).
  const probeThrough = relaxedProbeThrough(/** @type {any} */ ({ exports: bq.exports }));
  return { backend: bq.backend, auto, probeThrough, kernels, checks, quantized, failures };
}

/** Bits of a float32 as a number (NaN payloads survive Float32Array stores). */
const f32 = (/** @type {number} */ u) => new Float32Array(new Uint32Array([u >>> 0]).buffer)[0];

/**
 * The relaxed build's quantizers (clang 19) against the simd128 build's (emcc), which the Node
 * suite checks against ggml itself: every type, with and without importance weights, on rows of
 * normal values, outliers, zeros, tiny and huge values, NaN with payloads, Inf. Byte for byte.
 * Returns the number of type and mode pairs compared.
 * @param {any} relaxed
 * @param {string[]} failures
 */
async function checkQuantize(relaxed, failures) {
  const simd = await init({ backend: 'simd128', layout: 'whole' });
  const r = rng(SEED + 7);
  const cols = 512,
    kinds = 12;
  const x = new Float32Array(kinds * cols);
  for (let i = 0; i < kinds; i++)
    for (let j = 0; j < cols; j++) {
      const g = (r() - 0.5) * 4;
      x[i * cols + j] = [
        g,
        g * (j % 37 === 5 ? 40 : 1),
        0,
        g * 1e-9,
        g * 1e-40,
        g * 1e6,
        j % 5 ? g : f32(0x7fc00001 + j),
        f32(0x7fc00001),
        j % 9 ? g : f32(0xff800001 + j),
        j === 3 ? Infinity : g,
        j % 2 ? Infinity : -Infinity,
        ((j % 8) - 4) * 0.5,
      ][i];
    }
  const w = new Float32Array(cols).map((_, j) => r() * 10 * (j % 97 === 3 ? 50 : 1));
  let compared = 0;
  for (const id of CODEC_TYPES) {
    const t = typeInfo(id);
    if (!t.quantize || t.blockSize === 1 || cols % t.blockSize) continue;
    for (const opts of t.requiresImatrix ? [{ imatrix: w }] : [{ rowLength: cols }, { imatrix: w }]) {
      /** The bytes, or the error's message (ggml aborts on some of these rows for the grid types). */
      const run = (/** @type {any} */ c, /** @type {Float32Array} */ v) => {
        try {
          return c.quantize(t.name, v, opts);
        } catch (e) {
          return String(/** @type {Error} */ (e).message);
        }
      };
      // A matrix one of whose rows fails: its rows one by one too.
      const inputs = [x];
      if (typeof run(simd, x) === 'string')
        for (let i = 0; i < kinds; i++) inputs.push(x.subarray(i * cols, (i + 1) * cols));
      for (const v of inputs) {
        const a = run(relaxed, v),
          b = run(simd, v);
        compared++;
        const what = `quantize ${t.name}${opts.imatrix ? ' with an imatrix' : ''}${v === x ? '' : ' (a row)'}`;
        if (typeof a === 'string' || typeof b === 'string') {
          if (a !== b) failures.push(`${what}: ${a} where simd128 gives ${b}`);
          continue;
        }
        const d = a.findIndex((/** @type {number} */ q, /** @type {number} */ k) => q !== b[k]);
        if (d >= 0) failures.push(`${what}: byte ${d} differs from simd128`);
      }
    }
  }
  return compared;
}

/** A matvec, rows x 4096 columns (?fmt=: the weight format, Q4_0 by default; its activations are
 * ggml's vec_dot type for it): median ms per call of relaxed and simd128, measured
 * in alternating rounds of at least 25 ms each after a warm-up of 400 ms per build (V8 compiles
 * with its baseline tier first and optimizes hot functions in the background). */
async function bench() {
  const cols = 4096,
    rows = Number(params.get('rows') ?? 1024);
  const r = rng(SEED);
  const fmt = params.get('fmt') ?? 'q4_0';
  /** @type {Record<string, string>} the relaxed matvecs' activation types */
  const ACT = {
    q4_0: 'q8_0',
    q4_1: 'q8_1',
    q5_0: 'q8_0',
    q5_1: 'q8_1',
    q4_K: 'q8_K',
    q2_K: 'q8_K',
    q3_K: 'q8_K',
    q5_K: 'q8_K',
    q6_K: 'q8_K',
    iq4_xs: 'q8_K',
    mxfp4: 'q8_0',
    iq4_nl: 'q8_0',
    tq2_0: 'q8_K',
  };
  const act = ACT[fmt];
  if (!act) throw new Error(`no relaxed matvec for ${fmt}`);
  const isK = fmt in K,
    pair = `${fmt}_matvec_${act}`;
  const w = isK ? blocksK(fmt, (rows * cols) / 256, r, 'finite') : blocks(fmt, (rows * cols) / 32, r, 'finite'),
    x = isK ? blocksK(act, cols / 256, r, 'finite') : blocks(act, cols / 32, r, 'finite');
  // The kernels that take |a| as the 7-bit operand run SIMD128 code on a code -128, which no
  // quantizer gives: time them on codes -127..127, as quantized activations are.
  if (SIGNED_ACT.has(fmt)) noMinCodes(act, x);
  /** @type {Record<string, { backend: string, run: () => void, y: () => Float32Array, times: number[] }>} */
  const b = {};
  // The relaxed build's own SIMD128 kernel too: same compiler as the relaxed kernel, so the ratio
  // to it isolates the relaxed dot from the compilers' differences (clang 19 vs emcc's clang).
  for (const [key, backend, fn] of [
    ['relaxed', 'relaxed', `bq_${pair}`],
    ['simd128', 'simd128', `bq_${pair}`],
    ['relaxedBuildSimd128', 'relaxed', `bq_${pair}__simd128`],
  ]) {
    const bq = await init({ backend, module: await testModule(backend) });
    const X = /** @type {Record<string, any>} */ (bq.exports);
    const m = /** @type {WebAssembly.Memory} */ (X.memory);
    const wp = Math.ceil(X.bq_scratch_base() / 64) * 64,
      xp = wp + Math.ceil(w.length / 64) * 64,
      yp = xp + Math.ceil(x.length / 64) * 64;
    const need = yp + 4 * rows;
    if (need > m.buffer.byteLength) m.grow(Math.ceil((need - m.buffer.byteLength) / 65536));
    new Uint8Array(m.buffer, wp, w.length).set(w);
    new Uint8Array(m.buffer, xp, x.length).set(x);
    const f = X[fn];
    b[key] = {
      backend: bq.backend,
      run: () => f(wp, rows, cols, xp, yp),
      y: () => new Float32Array(m.buffer, yp, rows).slice(),
      times: [],
    };
    const t0 = performance.now();
    while (performance.now() - t0 < 400) b[key].run();
  }
  for (let round = 0; round < 15; round++) {
    for (const k of Object.keys(b)) {
      let calls = 0;
      const t0 = performance.now();
      let t = t0;
      while (t - t0 < 25) {
        b[k].run();
        calls++;
        t = performance.now();
      }
      b[k].times.push((t - t0) / calls);
    }
  }
  const med = (a) => a.slice().sort((p, q) => p - q)[a.length >> 1];
  const yr = b.relaxed.y(),
    ys = b.simd128.y();
  const same = yr.every((v, i) => Object.is(v, ys[i]));
  return {
    pair,
    rows,
    cols,
    relaxed: { backend: b.relaxed.backend, ms: med(b.relaxed.times) },
    simd128: { backend: b.simd128.backend, ms: med(b.simd128.times) },
    relaxedBuildSimd128: { ms: med(b.relaxedBuildSimd128.times) },
    ratio: med(b.simd128.times) / med(b.relaxed.times),
    ratioSameBuild: med(b.relaxedBuildSimd128.times) / med(b.relaxed.times),
    sameOutput: same && b.relaxedBuildSimd128.y().every((v, i) => Object.is(v, yr[i])),
  };
}

(params.get('bench') ? bench() : check())
  .then(
    (v) => v,
    (e) => ({ error: String(e && e.stack ? e.stack : e) }),
  )
  .then((v) => {
    window.result = v;
    // Browsers driven without a remote protocol (Firefox here) send it back to the server.
    if (params.get('post')) fetch('/result', { method: 'POST', body: JSON.stringify(v) });
  });
