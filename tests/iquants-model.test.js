// IQ4_NL, IQ4_XS, MXFP4, TQ1_0 and TQ2_0 against an independent JS model of ggml's code
// (tests/lib/oracle-iq.js): first the model against ggml's golden vectors (golden-iq4 and its
// edge/ set), then every wasm variant (public, __ref, __simd128 where exported) against the model
// at block counts around the SIMD tiles, on random floats, edge inputs (NaN/Inf, subnormals, ties,
// huge and tiny scales), random block bytes and edge scales. Quantize and dequantize bit for bit;
// dots bit for bit where the kernel sums in ggml's order, within 1e-5 of sum |terms| for SIMD.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as M from './lib/oracle-iq.js';
import * as oracle from './lib/oracle.js';
import * as oracleK from './lib/oracle-k.js';
import { Raw } from './lib/raw.js';
import { BACKEND, SEED, testCodec, edgeInputs, firstDiff, rng, sameFloat } from './lib/helpers.js';

const bq = await testCodec();
const X = /** @type {Record<string, any>} */ (bq.exports);
const raw = new Raw(bq.exports);
const TYPES = /** @type {(keyof typeof M.TYPES)[]} */ (Object.keys(M.TYPES));
const COUNTS = [1, 2, 3, 7, 8, 9, 64, 65];

console.log(`iquants-model: seed ${SEED} (BQ_SEED replays), backend ${BACKEND}`);

const FIX = new URL('./fixtures/golden-iq4/', import.meta.url);
const bytes = (/** @type {string} */ f) => new Uint8Array(readFileSync(new URL(f, FIX)));
const floats = (/** @type {string} */ f) => {
  const b = bytes(f);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const u32 = (/** @type {number} */ v) => new Float32Array(new Uint32Array([v]).buffer)[0];

/** Every variant of a kernel the build exports: public, __ref, __simd128. */
const variants = (/** @type {string} */ base) =>
  ['', '__ref', '__simd128'].filter((s) => typeof X[base + s] === 'function');
/** Whether variant v of base sums in ggml's order (the reference, or the public kernel of a build
 * without a SIMD one), so its result must be the model's bits. */
const inOrder = (/** @type {string} */ base, /** @type {string} */ v) =>
  v === '__ref' || (v === '' && !variants(base).includes('__simd128'));

/** Zeroes the qs of IQ4_NL blocks whose d is 0 (ggml leaves them unspecified, see masks.tsv). */
function maskEmptyIq4nl(/** @type {Uint8Array} */ b) {
  const c = b.slice();
  for (let o = 0; o < c.length; o += 18) if (c[o] === 0 && c[o + 1] === 0) c.fill(0, o + 2, o + 18);
  return c;
}

test('the model reproduces ggml golden-iq4 bit for bit: quantize, dequantize, dots', () => {
  const m = JSON.parse(readFileSync(new URL('manifest.json', FIX), 'utf8'));
  const input = Object.fromEntries(m.inputs.map((/** @type {any} */ i) => [i.name, i.file]));
  let n = 0;
  for (const q of m.quantized) {
    const want = bytes(q.quant_file);
    const got = M.quantize(q.type, floats(input[q.input]));
    const mask = q.type === 'iq4_nl' ? maskEmptyIq4nl : (/** @type {Uint8Array} */ b) => b;
    assert.equal(firstDiff(mask(got), mask(want)), -1, `${q.quant_file}: quantize`);
    assert.equal(firstDiff(M.dequantize(q.type, want), floats(q.dequant_file)), -1, `${q.dequant_file}`);
    n++;
  }
  assert.equal(n, 40);
  const lines = readFileSync(new URL('dots.tsv', FIX), 'utf8').split('\n').filter(Boolean);
  assert.equal(lines.length, 120);
  for (const line of lines) {
    const [pair, xf, yf, ns, hex] = line.split('\t');
    const t = pair.replace(/_q8_[0K]$/, '');
    const T = M.TYPES[t],
      A = M.ACT[T.act];
    const nb = Number(ns) / T.blk;
    const r = M.dot(t, bytes(xf).subarray(0, nb * T.bytes), bytes(yf).subarray(0, nb * A.bytes));
    assert.equal(M.bitsOf(r.sum), Number(hex), `${line}: model ${r.sum}`);
  }
});

// What GGUF files hold for IQ4_NL: ggml_quantize_chunk's bytes (golden-iq4/chunk/, made by
// llama.cpp's ggml), which the kernels are compared with below through the model.
test('the model reproduces ggml_quantize_chunk for IQ4_NL on the golden and edge inputs', () => {
  const m = JSON.parse(readFileSync(new URL('manifest.json', FIX), 'utf8'));
  const inputs = [...m.inputs.map((/** @type {any} */ i) => [i.name, i.file]), ['edge', 'edge/edge.f32']];
  for (const [name, file] of inputs) {
    const want = bytes(`chunk/${name}.iq4_nl.bin`);
    assert.equal(firstDiff(M.quantizeChunk('iq4_nl', floats(file)), want), -1, `chunk/${name}.iq4_nl.bin`);
  }
  assert.equal(inputs.length, 9);
});

test('the model reproduces ggml edge vectors (NaN, Inf, subnormal, overflowing scales) bit for bit', () => {
  const x = floats('edge/edge.f32');
  for (const t of TYPES) {
    const want = bytes(`edge/edge.${t}.bin`);
    const got = M.quantize(t, x);
    const mask = t === 'iq4_nl' ? maskEmptyIq4nl : (/** @type {Uint8Array} */ b) => b;
    assert.equal(firstDiff(mask(got), mask(want)), -1, `edge.${t}: quantize`);
    assert.equal(firstDiff(M.dequantize(t, want), floats(`edge/edge.${t}.f32`)), -1, `edge.${t}: dequantize`);
  }
  const lines = readFileSync(new URL('edge/dots.tsv', FIX), 'utf8').split('\n').filter(Boolean);
  assert.equal(lines.length, 603);
  for (const line of lines) {
    const [pair, s0, nbs, hex] = line.split('\t');
    const t = pair.replace(/_q8_[0K]$/, '');
    const T = M.TYPES[t],
      A = M.ACT[T.act];
    const s = Number(s0),
      nb = Number(nbs);
    const xb = bytes(`edge/edge.${t}.bin`).subarray(s * T.bytes, (s + nb) * T.bytes);
    const yb = bytes(`edge/edge_v.${T.act}.bin`).subarray(s * A.bytes, (s + nb) * A.bytes);
    const r = M.dot(t, xb, yb);
    assert.ok(sameFloat(r.sum, u32(Number(hex))), `${line}: model ${r.sum}`);
  }
});

// ---- Inputs ------------------------------------------------------------------------------------

/** Gaussian values with heavy tails. */
const gaussian = (/** @type {number} */ n, /** @type {any} */ r) =>
  new Float32Array(n).map(() => r.normal() * (r.next() < 0.05 ? 30 : 1));

/** Random bytes: every bit pattern, NaN/Inf/subnormal scales included. */
function randomBytes(/** @type {number} */ n, /** @type {any} */ r) {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (r.next() * 256) | 0;
  return b;
}

// Scale fields: fp16 zeros, Inf, NaNs, subnormals, extreme normals, one; E8M0 subnormals (0, 1, 2),
// one (128), the largest (254, 255).
const EDGE_HALVES = [0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00];
const EDGE_E8M0 = [0, 1, 2, 3, 25, 26, 127, 128, 129, 200, 254, 255];
/** Where the scale field sits (fp16 d, or MXFP4's E8M0 byte). */
const SCALE_AT = { iq4_nl: 0, iq4_xs: 0, mxfp4: -1, tq1_0: 52, tq2_0: 64 };

/** Random blocks with the scale field set to edge values in turn (codes random, all-zero or
 * all-ones bytes); or (finite) with normal, moderate scales so dots stay finite. */
function blocks(/** @type {string} */ t, /** @type {number} */ nb, /** @type {any} */ r, finite = false) {
  const { bytes: bs } = M.TYPES[t];
  const b = randomBytes(nb * bs, r);
  const at = SCALE_AT[t];
  for (let i = 0; i < nb; i++) {
    const o = i * bs;
    // Each edge scale in turn with random codes, then with all-zero, then all-ones bytes.
    const codes = Math.floor(i / (at < 0 ? EDGE_E8M0 : EDGE_HALVES).length) % 3;
    if (!finite && codes === 1) b.fill(0, o, o + bs);
    if (!finite && codes === 2) b.fill(255, o, o + bs);
    if (at < 0) b[o] = finite ? 100 + ((r.next() * 40) | 0) : EDGE_E8M0[i % EDGE_E8M0.length];
    else {
      const h = finite ? 0x1c00 + ((r.next() * 0x1000) | 0) : EDGE_HALVES[i % EDGE_HALVES.length];
      b[o + at] = h & 0xff;
      b[o + at + 1] = h >> 8;
    }
  }
  return b;
}

/** Gaussian values with, per 256, a large value early and a NaN late (position varying). */
function nanLate(/** @type {number} */ n, /** @type {any} */ r) {
  const x = gaussian(n, r);
  const at = [241, 250, 255, 245, 200, 17];
  for (let k = 0; k < Math.floor(n / 256); k++) {
    x[256 * k + (k % 7)] = 40 * (k % 2 ? -1 : 1);
    x[256 * k + 240 + (k % 3)] = -25;
    x[256 * k + at[k % at.length]] = NaN;
  }
  return x;
}

/** Activations: the simple and K-quant models' Q8_0/Q8_K of x (not the code under test). */
const activations = (/** @type {string} */ act, /** @type {Float32Array} */ x) =>
  act === 'q8_K' ? oracleK.quantizeQ8K(x) : oracle.quantize('q8_0', x);

// ---- Kernel calls ------------------------------------------------------------------------------

function runQuantize(/** @type {string} */ name, /** @type {Float32Array} */ x, /** @type {number} */ outBytes) {
  raw.reset();
  const xp = raw.put(x),
    yp = raw.alloc(outBytes);
  new Uint8Array(raw.mem.buffer, yp, outBytes).fill(0xee);
  assert.equal(X[name](xp, yp, x.length), 0, name);
  return raw.bytes(yp, outBytes);
}

function runDequantize(/** @type {string} */ name, /** @type {Uint8Array} */ q, /** @type {number} */ n) {
  raw.reset();
  const qp = raw.put(q),
    yp = raw.alloc(4 * n);
  new Uint8Array(raw.mem.buffer, yp, 4 * n).fill(0xee);
  assert.equal(X[name](qp, yp, n), 0, name);
  return raw.floats(yp, n);
}

/** A dot kernel's result: name is bq_<t>_dot_<t2><v>; its state is summed by ..._sum<v>. */
function runDot(/** @type {string} */ base, /** @type {string} */ v, a, b, /** @type {number} */ n) {
  raw.reset();
  const ap = raw.put(a),
    bp = raw.put(b),
    acc = raw.zeroAcc();
  assert.equal(X[base + v](ap, bp, n, acc), 0, base + v);
  return X[`${base}_sum${v}`](acc);
}

const FLT_MAX = 3.4028234663852886e38;

/**
 * Judges a dot result against the model's DotSummary: bit for bit where the kernel sums in ggml's
 * order. Otherwise: NaN where every order gives NaN; the infinite terms' infinity where they
 * decide; within 1e-5 of sum |terms| of the exact sum of the finite terms. Where those finite
 * terms add up past FLT_MAX, partial sums can overflow in one order and not in another, so there
 * an infinity (of either sign) or NaN is also a right answer.
 * @param {number} got
 * @param {import('./lib/oracle-iq.js').DotSummary} want
 * @param {boolean} exact
 * @param {string} what
 */
function judgeDot(got, want, exact, what) {
  const msg = `${what}: ${got} vs model ${want.sum} (exact ${want.exact}, sum |terms| ${want.abs})`;
  if (exact) return assert.ok(sameFloat(got, want.sum), msg);
  if (want.nan) return assert.ok(Number.isNaN(got), msg);
  if (want.abs > FLT_MAX && !Number.isFinite(got)) return;
  if (want.inf) return assert.equal(got, want.inf * Infinity, msg);
  assert.ok(Math.abs(got - want.exact) <= 1e-5 * want.abs, msg);
}

// ---- Wasm kernels against the model ------------------------------------------------------------

for (const t of TYPES) {
  const T = M.TYPES[t];

  test(`${t}: quantize, every variant, equals the model on random and edge floats, seed ${SEED}`, () => {
    const r = rng(SEED ^ 0x51);
    let checked = 0;
    for (const nb of COUNTS) {
      const n = nb * T.blk;
      const sets = [
        ['gaussian', gaussian(n, r)],
        ['edge', edgeInputs(n / 32, r.seed + nb)],
        // A NaN late in each 256 values, after a large value: ggml's MAX() in TQ1_0/TQ2_0 restarts
        // at the NaN, so earlier values exceed d and their trits leave 0..2 (wrapping in TQ1_0's
        // uint8 packing, the qh bytes included).
        ['NaN after a large value', nanLate(n, r)],
        // Uniform random bit patterns: every exponent, NaN payloads aside (NaN -> the default NaN).
        ['random bits', new Float32Array(randomBytes(4 * n, r).buffer).map((v) => (Number.isNaN(v) ? NaN : v))],
      ];
      for (const [what, x] of /** @type {[string, Float32Array][]} */ (sets)) {
        const want = M.quantizeChunk(t, x);
        for (const v of variants(`bq_${t}_quantize`)) {
          const got = runQuantize(`bq_${t}_quantize${v}`, x, nb * T.bytes);
          assert.equal(
            firstDiff(got, want),
            -1,
            `${t} quantize${v} ${what} ${nb} blocks: byte ${firstDiff(got, want)}`,
          );
          checked++;
        }
      }
    }
    assert.ok(checked >= COUNTS.length * 3 * 2, `only ${checked} checks`);
  });

  test(`${t}: dequantize, every variant, equals the model on random and edge blocks, seed ${SEED}`, () => {
    const r = rng(SEED ^ 0x52);
    for (const nb of COUNTS) {
      const sets = [
        ['random bytes', randomBytes(nb * T.bytes, r)],
        ['edge scales', blocks(t, nb, r)],
        ['quantized', M.quantize(t, gaussian(nb * T.blk, r))],
      ];
      for (const [what, q] of /** @type {[string, Uint8Array][]} */ (sets)) {
        const want = M.dequantize(t, q);
        const vs = variants(`bq_${t}_dequantize`);
        assert.ok(vs.includes('') && vs.includes('__ref'));
        for (const v of vs) {
          const got = runDequantize(`bq_${t}_dequantize${v}`, q, nb * T.blk);
          const d = firstDiff(got, want);
          assert.equal(d, -1, `${t} dequantize${v} ${what} ${nb} blocks: value ${d}: ${got[d]} vs model ${want[d]}`);
        }
      }
    }
  });

  test(`${t}: dot with ${T.act}, every variant, against the model, seed ${SEED}`, () => {
    const r = rng(SEED ^ 0x53);
    const base = `bq_${t}_dot_${T.act}`;
    const vs = variants(base);
    assert.ok(vs.includes('') && vs.includes('__ref'));
    for (const nb of COUNTS) {
      const n = nb * T.blk;
      const A = M.ACT[T.act];
      const act = activations(T.act, gaussian(n, r));
      const edgeAct = activations(T.act, edgeInputs(n / 32, r.seed + nb));
      // Q8 activations with random codes and a finite fp16 (Q8_0) or f32 (Q8_K) d.
      const rndAct = randomBytes(nb * A.bytes, r);
      for (let i = 0; i < nb; i++) {
        const o = i * A.bytes;
        if (T.act === 'q8_0') [rndAct[o], rndAct[o + 1]] = [(r.next() * 256) | 0, 0x10 + ((r.next() * 0x28) | 0)];
        else new DataView(rndAct.buffer).setFloat32(o, (r.next() - 0.5) * 2 ** (((r.next() * 40) | 0) - 30), true);
      }
      const sets = [
        ['quantized . gaussian', M.quantize(t, gaussian(n, r)), act],
        ['edge-quantized . edge', M.quantize(t, edgeInputs(n / 32, r.seed + 7 * nb)), edgeAct],
        ['random bytes . random', randomBytes(nb * T.bytes, r), rndAct],
        ['edge scales . gaussian', blocks(t, nb, r), act],
        ['finite scales . random', blocks(t, nb, r, true), rndAct],
      ];
      for (const [what, a, b] of /** @type {[string, Uint8Array, Uint8Array][]} */ (sets)) {
        const want = M.dot(t, a, b);
        for (const v of vs)
          judgeDot(runDot(base, v, a, b, n), want, inOrder(base, v), `${base}${v} ${what} ${nb} blocks`);
      }
    }
  });

  test(`${t}: dot with f32, every variant, against the model, seed ${SEED}`, () => {
    const r = rng(SEED ^ 0x54);
    const base = `bq_${t}_dot_f32`;
    const vs = variants(base);
    assert.ok(vs.includes('') && vs.includes('__ref'));
    for (const nb of COUNTS) {
      const n = nb * T.blk;
      const sets = [
        ['quantized . gaussian', M.quantize(t, gaussian(n, r)), gaussian(n, r)],
        ['edge-quantized . edge', M.quantize(t, edgeInputs(n / 32, r.seed + nb)), edgeInputs(n / 32, r.seed + 3 * nb)],
        ['random bytes . gaussian', randomBytes(nb * T.bytes, r), gaussian(n, r)],
        ['finite scales . gaussian', blocks(t, nb, r, true), gaussian(n, r)],
      ];
      for (const [what, a, y] of /** @type {[string, Uint8Array, Float32Array][]} */ (sets)) {
        const want = M.dotF32(t, a, y);
        for (const v of vs)
          judgeDot(runDot(base, v, a, y, n), want, inOrder(base, v), `${base}${v} ${what} ${nb} blocks`);
      }
    }
  });
}

test('mxfp4: the shared exponent of the floats at and just below every power of two, every variant', () => {
  // floorf(log2f(amax)) rounds up to k for the floats just below 2^k: one block per float, the
  // float first and its negation at element 20 (so the scan keeps the first), 64 floats per 2^k.
  const vals = [];
  for (let k = -148; k <= 128; k++) {
    // Bits of 2^k: subnormal below 2^-126, Inf for k = 128.
    const top = k < -126 ? 2 ** (k + 149) : k === 128 ? 0x7f800000 : (k + 127) * 2 ** 23;
    for (let i = 0; i < 64; i++) vals.push(top - 1 - i);
    if (k < 128) vals.push(top, top + 1);
  }
  for (let u = 1; u < 64; u++) vals.push(u); // the smallest subnormals
  const x = new Float32Array(32 * vals.length);
  const bits = new Uint32Array(x.buffer);
  vals.forEach((u, i) => {
    bits[32 * i] = u;
    x[32 * i + 20] = -x[32 * i];
    x[32 * i + 7] = x[32 * i] * 0.3;
  });
  const want = M.quantize('mxfp4', x);
  for (let i = 0; i < vals.length; i++) assert.equal(want[17 * i], M.mxfp4Exponent(x[32 * i]));
  // Spot values from IQUANTS.md: the subnormal 1e-40 gives 248 (x86's cast of a negative value).
  assert.equal(M.mxfp4Exponent(Math.fround(1e-40)), 248);
  assert.equal(M.mxfp4Exponent(1), 125);
  assert.equal(M.mxfp4Exponent(Infinity), 0);
  for (const v of variants('bq_mxfp4_quantize')) {
    const got = runQuantize(`bq_mxfp4_quantize${v}`, x, want.length);
    const d = firstDiff(got, want);
    assert.equal(d, -1, `quantize${v}: block ${Math.floor(d / 17)} (x = ${x[32 * Math.floor(d / 17)]}) byte ${d % 17}`);
  }
});
