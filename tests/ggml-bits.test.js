// Every decoder and every dot of the build under test against llama.cpp's own ggml (the oracle,
// tests/lib/ggml.js) on hostile block bytes: random codes under fp16 scales that are huge, the
// largest finite, NaN with payloads, +-Inf, subnormal or zero, Q8_K's fp32 d likewise, and
// activations whose codes are all zero (so an infinite scale meets an integer sum of 0).
//
//   decoders   equal ggml's to_float bit for bit, except that a NaN's sign and payload are the
//              engine's (WebAssembly leaves them open): NaN matches NaN, nothing else is loose.
//   dots       ggml's vec_dot pairs: the reference kernels (every kernel of the scalar build) equal
//              ggml's generic C bit for bit (NaN matches NaN). A SIMD128 kernel gives NaN where
//              ggml gives NaN and the same infinity where ggml gives one; otherwise a finite result
//              within 1e-5 of the sum of |terms| (the JS models' terms, tests/lib/oracle*.js).
//              Q8_K's finite d stays below 1e20 for those, so no finite partial sum can overflow
//              in any summation order; the references also see d near FLT_MAX.
//   f32 dots   blockquant's fused dots with float values: ggml's decoded values times v, added in
//              element order in float. The same two rules, the terms being the products. (ggml
//              has no such dot for a quantized type.) F32 . F32 is ggml's own vec_dot, whose generic
//              C sums the products in double: it is compared with ggml's result itself.
//
// On the simd128 run the threads build (clang-19, SIMD128 and atomics, on a shared memory) is
// checked too: it has the same kernels, compiled by another compiler. Seeded: BQ_SEED replays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as ggml from './lib/ggml.js';
import * as L from './lib/oracle.js';
import * as K from './lib/oracle-k.js';
import * as IQ from './lib/oracle-iq.js';
import { Raw } from './lib/raw.js';
import { BACKEND, SEED, testCodec, rng, testWasmFile } from './lib/helpers.js';
import { typeInfo, typeId, blockFields } from '../js/types.js';

console.log(`ggml-bits: seed ${SEED} (BQ_SEED replays), backend ${BACKEND}`);

const f = Math.fround;
const F = new Float32Array(1),
  U = new Uint32Array(F.buffer);
const bitsOf = (/** @type {number} */ x) => ((F[0] = x), U[0]);
const fromBits = (/** @type {number} */ u) => ((U[0] = u >>> 0), F[0]);
const hex = (/** @type {number} */ u) => `0x${(u >>> 0).toString(16).padStart(8, '0')}`;
const isNaNBits = (/** @type {number} */ u) => (u & 0x7fffffff) > 0x7f800000;

/** The builds to check in this run: the one under test, and on the simd128 run the threads one. */
async function builds() {
  const main = await testCodec();
  const out = [{ name: BACKEND, exports: /** @type {Record<string, any>} */ (main.exports) }];
  if (BACKEND === 'simd128') {
    const file = testWasmFile('threads');
    const memory = new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true });
    const { instance } = await WebAssembly.instantiate(readFileSync(file), { env: { memory } });
    out.push({ name: 'threads', exports: { ...instance.exports, memory } });
    // The relaxed build (clang-19) where this runtime runs relaxed SIMD (Node 20 does with
    // --experimental-wasm-relaxed-simd; tests/relaxed.test.js runs it in Chromium).
    const relaxed = await testCodec({ backend: 'relaxed' }).catch(() => null);
    if (relaxed) out.push({ name: 'relaxed', exports: /** @type {Record<string, any>} */ (relaxed.exports) });
    console.log(`ggml-bits: the relaxed build is ${relaxed ? '' : 'not '}checked in this runtime`);
  }
  return out;
}
const BUILDS = await builds();

// ---- Hostile bytes ------------------------------------------------------------------------------

/** @typedef {ReturnType<typeof rng>} Rng */

/** An fp16 scale: half the time a normal value, else one of the hostile classes. */
function half(/** @type {Rng} */ r) {
  const s = r.next() < 0.5 ? 0x8000 : 0;
  const u = r.next();
  if (u < 0.5) return s | (0x1800 + ((r.next() * 0x5000) | 0)); // 2^-9 .. 2^11
  if (u < 0.6) return s | (0x7800 + ((r.next() * 0x400) | 0)); // 32768 .. 65504
  if (u < 0.65) return s | 0x7bff; // 65504
  if (u < 0.75) return s | 0x7c00 | (1 + ((r.next() * 0x3ff) | 0)); // NaN, any payload
  if (u < 0.85) return s | 0x7c00; // Inf
  if (u < 0.95) return s | (1 + ((r.next() * 0x3ff) | 0)); // subnormal
  return s; // +-0
}

/** A Q8_K d (fp32) as bits; huge: finite values up to FLT_MAX (only for the exact checks). */
function float32Scale(/** @type {Rng} */ r, /** @type {boolean} */ huge) {
  const s = r.next() < 0.5 ? 0x80000000 : 0;
  const u = r.next();
  const mag = (/** @type {number} */ lo, /** @type {number} */ hi) => bitsOf(10 ** (lo + (hi - lo) * r.next()));
  if (u < 0.45) return (s | mag(-6, 4)) >>> 0;
  if (u < 0.6) return (s | (huge ? mag(20, 38.5) : mag(4, 20))) >>> 0;
  if (u < 0.7) return (s | 0x7f800000 | (1 + ((r.next() * 0x7fffff) | 0))) >>> 0; // NaN
  if (u < 0.8) return (s | 0x7f800000) >>> 0; // Inf
  if (u < 0.92) return (s | (1 + ((r.next() * 0x7fffff) | 0))) >>> 0; // subnormal
  return s >>> 0;
}

/** A float operand of an f32 dot: moderate mostly, a few zeros, NaNs, infinities, subnormals. */
function value(/** @type {Rng} */ r) {
  const u = r.next();
  if (u < 0.86) return (r.next() < 0.5 ? -1 : 1) * 10 ** (8 * r.next() - 4);
  if (u < 0.9) return r.next() < 0.5 ? 0 : -0;
  if (u < 0.93)
    return fromBits(((r.next() < 0.5 ? 0x80000000 : 0) | 0x7f800000 | (1 + ((r.next() * 0x7fffff) | 0))) >>> 0);
  if (u < 0.96) return r.next() < 0.5 ? Infinity : -Infinity;
  return fromBits(1 + ((r.next() * 0x7fffff) | 0)) * (r.next() < 0.5 ? -1 : 1);
}

/**
 * nb blocks of a type: random bytes, each scale field hostile (half(), or float32Scale() for an
 * fp32 one). The codes of an activation block (Q8_0, Q8_1, Q8_K) are random, all zero, sparse
 * and non-negative (an infinite scale then meets integer sums of 0 in some groupings and not in
 * others), or all non-negative; Q8_K's bsums are the sums of its codes half the time.
 * @param {string} t
 * @param {number} nb
 * @param {Rng} r
 * @param {boolean} huge fp32 scales may be near FLT_MAX
 */
function hostileBlocks(t, nb, r, huge) {
  const { typeSize } = typeInfo(t);
  const fields = blockFields(t) ?? [];
  const b = new Uint8Array(nb * typeSize).map(() => (r.next() * 256) | 0);
  const dv = new DataView(b.buffer);
  const act = t.startsWith('q8_');
  for (let i = 0; i < nb; i++) {
    const o = i * typeSize;
    const codes = r.next();
    for (const fl of fields) {
      const at = o + fl.offset;
      if (fl.kind === 'f16') for (let k = 0; k < fl.size; k += 2) dv.setUint16(at + k, half(r), true);
      else if (fl.kind === 'f32')
        for (let k = 0; k < fl.size; k += 4) dv.setUint32(at + k, float32Scale(r, huge), true);
      else if (act && fl.name === 'qs' && codes < 0.2) b.fill(0, at, at + fl.size);
      else if (act && fl.name === 'qs' && codes < 0.4)
        for (let k = 0; k < fl.size; k++) b[at + k] = r.next() < 0.95 ? 0 : 1 + ((r.next() * 127) | 0);
      else if (act && fl.name === 'qs' && codes < 0.5) for (let k = 0; k < fl.size; k++) b[at + k] &= 0x7f;
      else if (fl.name === 'bsums' && r.next() < 0.5)
        for (let g = 0; g < fl.size / 2; g++) {
          let sum = 0;
          for (let k = 0; k < 16; k++) sum += (b[o + 4 + 16 * g + k] << 24) >> 24;
          dv.setInt16(at + 2 * g, sum, true);
        }
      else if (fl.name === 'e' && t === 'mxfp4' && r.next() < 0.3) b[at] = [0, 1, 2, 127, 254, 255][(r.next() * 6) | 0];
    }
  }
  return b;
}

// ---- What ggml gives ----------------------------------------------------------------------------

/** Oracle dequantize jobs: ggml has no Q8_1 decoder; blockquant decodes d * q as Q8_0 does, so a
 * Q8_1 row is checked against ggml's Q8_0 decoder of the same d and codes. F32 decodes as a copy. */
function oracleJob(/** @type {string} */ t, /** @type {Uint8Array} */ q) {
  const { blockSize, typeSize } = typeInfo(t);
  const n = (q.length / typeSize) * blockSize;
  if (t !== 'q8_1') return { type: typeId(t), q, n };
  const nb = q.length / 36,
    q0 = new Uint8Array(nb * 34);
  for (let b = 0; b < nb; b++) {
    q0.set(q.subarray(36 * b, 36 * b + 2), 34 * b);
    q0.set(q.subarray(36 * b + 4, 36 * b + 36), 34 * b + 2);
  }
  return { type: typeId('q8_0'), q: q0, n };
}
function oracleDecode(/** @type {{ t: string, q: Uint8Array }[]} */ rows) {
  const jobs = rows.filter((x) => x.t !== 'f32').map((x) => oracleJob(x.t, x.q));
  const got = ggml.dequantize(jobs);
  let k = 0;
  return rows.map((x) =>
    x.t === 'f32' ? new Float32Array(x.q.buffer.slice(x.q.byteOffset, x.q.byteOffset + x.q.length)) : got[k++],
  );
}

/**
 * What a dot in another summation order is judged by: the sum of |finite term|, and the class
 * every order shares (NaN: a NaN term or infinite terms of both signs; else the infinity's sign).
 * @param {ArrayLike<number>} terms
 */
function summary(terms) {
  let abs = 0,
    nan = false,
    pinf = false,
    ninf = false;
  for (let i = 0; i < terms.length; i++) {
    const v = terms[i];
    nan ||= Number.isNaN(v);
    pinf ||= v === Infinity;
    ninf ||= v === -Infinity;
    if (Number.isFinite(v)) abs += Math.abs(v);
  }
  return { abs, nan: nan || (pinf && ninf), inf: pinf ? 1 : ninf ? -1 : 0 };
}

/** The JS model's sum |terms| of a vec_dot pair (the bound for kernels of another order). */
function modelAbs(
  /** @type {string} */ t,
  /** @type {string} */ t2,
  /** @type {Uint8Array} */ x,
  /** @type {Uint8Array} */ y,
) {
  if (t2 === 'q8_K' && K.KTYPES.includes(t)) return K.dotQ8K(t, x, y).abs;
  if (IQ.TYPES[t]) return IQ.dot(t, x, y).abs;
  const n = (x.length / typeInfo(t).typeSize) * 32;
  return L.vecDot([t, t2], x, y, n).abs;
}

// ---- Checks -------------------------------------------------------------------------------------

/** The kernels of a build: exported names of one op, by base name, with their ISA variants. */
function kernels(/** @type {Record<string, any>} */ X, /** @type {RegExp} */ re) {
  /** @type {Map<string, { t: string, t2: string | null, vs: string[] }>} */
  const m = new Map();
  for (const name of Object.keys(X)) {
    const g = re.exec(name);
    if (!g || typeof X[name] !== 'function') continue;
    const base = name.replace(/__(ref|simd128)$/, '');
    const e = m.get(base) ?? { t: g[1], t2: g[2] ?? null, vs: [] };
    e.vs.push(name.slice(base.length));
    m.set(base, e);
  }
  return m;
}

/** The vec_dot pairs whose SIMD128 kernels (dot and matvec) add in ggml's order, so every variant
 * is held to ggml's bits (src/simd128/nvfp4.c, q1_0.c, q2_0.c, tq1_0.c, tq2_0.c, iqdot.h and the
 * grid formats' files). */
const IN_ORDER = new Set([
  'nvfp4',
  'q1_0',
  'q2_0',
  'tq1_0',
  'tq2_0',
  'iq2_xxs',
  'iq2_xs',
  'iq2_s',
  'iq3_xxs',
  'iq3_s',
  'iq1_s',
  'iq1_m',
]);

/** Exact: the variant computes in ggml's order (a reference, the public name of a build or pair
 * without a SIMD128 kernel, or an IN_ORDER pair with its activation type). */
function exact(/** @type {Record<string, any>} */ X, /** @type {string} */ base, /** @type {string} */ v) {
  const pair = /^bq_(\w+?)_(?:dot|matvec)_(q8_0|q8_K)$/.exec(base);
  if (pair && IN_ORDER.has(pair[1]) && typeInfo(typeInfo(pair[1]).vecDot).name === pair[2]) return true;
  return v === '__ref' || (v === '' && typeof X[`${base}__simd128`] !== 'function');
}

/** Differences by kernel: how many cases and the first one, so one run names every kernel. */
class Faults {
  /** @type {Map<string, { n: number, first: string }>} */
  m = new Map();
  /** @param {string} kernel @param {string} msg */
  add(kernel, msg) {
    const e = this.m.get(kernel) ?? { n: 0, first: msg };
    e.n++;
    this.m.set(kernel, e);
  }
  /** @param {number} cases */
  assertNone(cases) {
    const lines = [...this.m].map(([k, e]) => `${k}: ${e.n} cases differ, first ${e.first}`);
    assert.equal(lines.length, 0, `${lines.join('\n')}\n(${cases} cases, seed ${SEED})`);
  }
}

/**
 * A dot result against ggml's bits: exactly (NaN matching NaN), or by class and bound. Returns
 * what differs, or ''.
 * @param {number} got
 * @param {number} want uint32 bits
 * @param {{ abs: number } | null} bound
 */
function dotDiff(got, want, bound) {
  const g = bitsOf(got),
    w = fromBits(want);
  const said = `${hex(g)} (${got}), ggml ${hex(want)} (${w})`;
  if (!bound) return g === want || (isNaNBits(g) && isNaNBits(want)) ? '' : said;
  if (Number.isNaN(w)) return Number.isNaN(got) ? '' : said;
  if (!Number.isFinite(w)) return got === w ? '' : said;
  return Number.isFinite(got) && Math.abs(got - w) <= 1e-5 * bound.abs ? '' : `${said}, sum |terms| ${bound.abs}`;
}

const COUNTS_32 = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33];
const COUNTS_256 = [1, 2, 3, 4, 5, 8, 9];
const counts = (/** @type {string} */ t) => (typeInfo(t).blockSize === 256 ? COUNTS_256 : COUNTS_32);

for (const { name: build, exports: X } of BUILDS) {
  const raw = new Raw(/** @type {WebAssembly.Exports} */ (X));
  const decoders = kernels(X, /^bq_(\w+?)_dequantize(?:__ref|__simd128)?$/);
  const dots = kernels(X, /^bq_(\w+?)_dot_(f32|q8_0|q8_1|q8_K)(?:__ref|__simd128)?$/);

  test(`${build}: every decoder equals ggml's to_float bit for bit (a NaN's sign and payload aside) on hostile blocks, seed ${SEED}`, () => {
    assert.ok(decoders.size >= 27, `${decoders.size} decoders found`);
    const r = rng(SEED ^ 0x5a11);
    /** @type {{ t: string, q: Uint8Array }[]} */
    const rows = [];
    for (const { t } of decoders.values())
      for (const nb of counts(t)) rows.push({ t, q: hostileBlocks(t, nb, r, true) });
    const want = oracleDecode(rows);
    const faults = new Faults();
    let checked = 0;
    rows.forEach(({ t, q }, k) => {
      const n = want[k].length,
        wu = new Uint32Array(want[k].buffer);
      for (const v of decoders.get(`bq_${t}_dequantize`)?.vs ?? []) {
        raw.reset();
        const qp = raw.put(q),
          yp = raw.alloc(4 * n);
        assert.equal(X[`bq_${t}_dequantize${v}`](qp, yp, n), 0);
        const gu = new Uint32Array(raw.floats(yp, n).buffer);
        for (let i = 0; i < n; i++)
          if (gu[i] !== wu[i] && !(isNaNBits(gu[i]) && isNaNBits(wu[i])))
            faults.add(`${build} bq_${t}_dequantize${v}`, `value ${i} of ${n} is ${hex(gu[i])}, ggml ${hex(wu[i])}`);
        checked++;
      }
    });
    faults.assertNone(checked);
  });

  /**
   * The matvec kernels of a pair: rows of hostile blocks against one activation row, each row
   * judged as that row's dot (the prepared-activation paths see the same inputs). Returns the
   * number of rows checked.
   * @param {string} t
   * @param {string} t2
   * @param {number} step
   * @param {Faults} faults
   * @param {Rng} r
   */
  function checkMatvec(t, t2, step, faults, r) {
    const base = `bq_${t}_matvec_${t2}`;
    const vs = ['', '__ref', '__simd128'].filter((v) => typeof X[`${base}${v}`] === 'function');
    assert.ok(vs.includes(''), `${base} is exported`);
    const f32 = t2 === 'f32';
    let checked = 0;
    for (const nb of [1, 3, 9]) {
      const cols = nb * step,
        rows = 6;
      const w = hostileBlocks(t, (rows * cols) / typeInfo(t).blockSize, r, false);
      const rowBytes = w.length / rows;
      const xv = f32 ? new Float32Array(cols).map(() => value(r)) : null;
      const x = xv ? new Uint8Array(xv.buffer) : hostileBlocks(t2, cols / typeInfo(t2).blockSize, r, false);
      const rowOf = (/** @type {number} */ i) => w.subarray(i * rowBytes, (i + 1) * rowBytes);
      /** @type {{ want: number, bound: { abs: number } }[]} */
      let wants;
      if (xv) {
        const dec = oracleDecode(Array.from({ length: rows }, (_, i) => ({ t, q: rowOf(i) })));
        wants = dec.map((wv) => {
          const terms = new Float32Array(cols);
          let sum = 0;
          for (let i = 0; i < cols; i++) sum = f(sum + (terms[i] = f(wv[i] * xv[i])));
          return { want: bitsOf(sum), bound: summary(terms) };
        });
      } else {
        const got = ggml.dot(Array.from({ length: rows }, (_, i) => ({ type: typeId(t), x: rowOf(i), y: x, n: cols })));
        wants = got.map((want, i) => ({ want, bound: { abs: modelAbs(t, t2, rowOf(i), x) } }));
      }
      for (const v of vs) {
        raw.reset();
        const wp = raw.put(w),
          xp = raw.put(x),
          yp = raw.alloc(4 * rows);
        assert.equal(X[`${base}${v}`](wp, rows, cols, xp, yp), 0);
        const y = raw.floats(yp, rows);
        const ex = exact(X, base, v);
        for (let i = 0; i < rows; i++) {
          const d = dotDiff(y[i], wants[i].want, ex ? null : wants[i].bound);
          if (d) faults.add(`${build} ${base}${v}`, `row ${i}: ${d} at ${cols} columns`);
          checked++;
        }
      }
    }
    return checked;
  }

  test(`${build}: every vec_dot pair equals ggml's generic C (references bit for bit; SIMD128 NaN, Inf and bound) on hostile blocks, seed ${SEED}`, () => {
    const pairs = [...dots.entries()].filter(([, d]) => d.t2 !== 'f32');
    assert.ok(pairs.length >= 21, `${pairs.length} pairs found`);
    const r = rng(SEED ^ 0xd07);
    const faults = new Faults();
    let checked = 0;
    for (const [base, { t, t2, vs }] of pairs) {
      assert.equal(typeInfo(t).vecDot, typeId(/** @type {string} */ (t2)), `${base}: ggml's pair`);
      const step = typeInfo(t).blockSize === 256 || t2 === 'q8_K' ? 256 : Math.max(32, typeInfo(t).blockSize);
      const cases = [];
      for (const nb of counts(t)) {
        const n = nb * step;
        for (const huge of [true, false]) {
          const x = hostileBlocks(t, n / typeInfo(t).blockSize, r, huge);
          const y = hostileBlocks(
            /** @type {string} */ (t2),
            n / typeInfo(/** @type {string} */ (t2)).blockSize,
            r,
            huge,
          );
          cases.push({ type: typeId(t), x, y, n, huge });
        }
      }
      const want = ggml.dot(cases);
      cases.forEach((c, k) => {
        for (const v of vs) {
          const ex = exact(X, base, v);
          if (c.huge && !ex) continue;
          raw.reset();
          const xp = raw.put(c.x),
            yp = raw.put(c.y),
            acc = raw.zeroAcc();
          assert.equal(X[`${base}${v}`](xp, yp, c.n, acc), 0);
          const got = X[`${base}_sum${v}`](acc);
          const d = dotDiff(got, want[k], ex ? null : { abs: modelAbs(t, /** @type {string} */ (t2), c.x, c.y) });
          if (d) faults.add(`${build} ${base}${v}`, `${d} at ${c.n} elements${c.huge ? ', scales up to FLT_MAX' : ''}`);
          checked++;
        }
      });
      checked += checkMatvec(t, /** @type {string} */ (t2), step, faults, r);
    }
    faults.assertNone(checked);
  });

  test(`${build}: every f32 dot equals ggml's decoded values times v in element order (references bit for bit; SIMD128 NaN, Inf and bound), seed ${SEED}`, () => {
    const pairs = [...dots.entries()].filter(([, d]) => d.t2 === 'f32');
    assert.ok(pairs.length >= 27, `${pairs.length} f32 dots found`);
    const r = rng(SEED ^ 0xf32);
    const cases = [];
    for (const [base, { t }] of pairs)
      for (const nb of counts(t === 'f32' || t === 'f16' || t === 'bf16' ? 'q8_0' : t)) {
        const n = nb * Math.max(32, typeInfo(t).blockSize);
        const q =
          t === 'f32'
            ? new Uint8Array(new Float32Array(n).map(() => value(r)).buffer)
            : hostileBlocks(t, n / typeInfo(t).blockSize, r, false);
        cases.push({ base, t, q, v: new Float32Array(n).map(() => value(r)) });
        // And all finite, where the order and width of the sum decide the last bits.
        const finite = () => (r.next() < 0.95 ? (r.next() < 0.5 ? -1 : 1) * 10 ** (4 * r.next() - 2) : 0);
        cases.push({
          base,
          t,
          q: t === 'f32' ? new Uint8Array(new Float32Array(n).map(finite).buffer) : q,
          v: new Float32Array(n).map(finite),
        });
      }
    const decoded = oracleDecode(cases);
    // F32 . F32: ggml's vec_dot itself (its generic C adds the products in double).
    const f32Cases = cases.filter((c) => c.t === 'f32');
    const f32Want = ggml.dot(f32Cases.map((c) => ({ type: 0, x: c.q, y: new Uint8Array(c.v.buffer), n: c.v.length })));
    const faults = new Faults();
    let checked = 0;
    cases.forEach((c, k) => {
      const w = decoded[k],
        n = w.length;
      const terms = new Float32Array(n);
      let sum = 0;
      for (let i = 0; i < n; i++) {
        terms[i] = f(w[i] * c.v[i]);
        sum = f(sum + terms[i]);
      }
      const want = c.t === 'f32' ? f32Want[f32Cases.indexOf(c)] : bitsOf(sum),
        bound = summary(terms);
      for (const v of dots.get(c.base)?.vs ?? []) {
        raw.reset();
        const xp = raw.put(c.q),
          vp = raw.put(c.v),
          acc = raw.zeroAcc();
        assert.equal(X[`${c.base}${v}`](xp, vp, n, acc), 0);
        const got = X[`${c.base}_sum${v}`](acc);
        const d = dotDiff(got, want, exact(X, c.base, v) ? null : bound);
        if (d) faults.add(`${build} ${c.base}${v}`, `${d} at ${n} elements`);
        checked++;
      }
    });
    for (const [, { t }] of pairs)
      if (typeof X[`bq_${t}_matvec_f32`] === 'function')
        checked += checkMatvec(t, 'f32', Math.max(32, typeInfo(t).blockSize), faults, r);
    faults.assertNone(checked);
  });
}
