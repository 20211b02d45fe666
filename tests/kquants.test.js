// The K-quants (Q2_K..Q6_K and the activation format Q8_K). First the independent JS model
// (tests/lib/oracle-k.js) against ggml's own golden vectors (tests/fixtures/golden-k/), bit for
// bit; then every K kernel of the build under test (public, __ref, __simd128) against that model
// and those vectors: quantize and dequantize bit-exact, dots bit-exact on the scalar kernels and
// within 1e-5 of sum |terms| on SIMD, dots fed in pieces equal to uncut, at super-block counts
// around the SIMD tiles, with realistic blocks and with any bytes at all (NaN/Inf/subnormal scales,
// inconsistent bsums). Seeded: BQ_SEED=<seed> replays a run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import * as K from './lib/oracle-k.js';
import { Raw } from './lib/raw.js';
import { BACKEND, SEED, testCodec, firstDiff, rng, sameFloat } from './lib/helpers.js';

const QK = 256;
const ALL = [...K.KTYPES, 'q8_K'];
const ID = { q2_K: 10, q3_K: 11, q4_K: 12, q5_K: 13, q6_K: 14, q8_K: 15 };
const COUNTS = [1, 2, 3, 7, 8, 9, 64, 65];

// ---- ggml's golden vectors ----------------------------------------------------------------------

const FIX = new URL('./fixtures/golden-k/', import.meta.url);
const file = (rel) => readFileSync(new URL(rel, FIX));
const bytesOf = (rel) => new Uint8Array(file(rel));
const floatsOf = (rel) => {
  const b = file(rel);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
};
const manifest = JSON.parse(file('manifest.json').toString('utf8'));
/** @type {{ input: string, type: string, quant_file: string, dequant_file: string, quant_sha256: string, dequant_sha256: string, unspecified_byte_ranges: number[][] }[]} */
const QUANTIZED = manifest.quantized;
const tsv = (rel) =>
  file(rel)
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => l.split('\t'));
/** The 120 dots of ggml's set: x file, y file, n, result bits. */
const DOTS = tsv('dots.tsv').map(([pair, xf, yf, n, hex]) => ({
  type: pair.replace(/_q8_K$/, ''),
  x: bytesOf(xf).subarray(0, (+n / QK) * K.TYPE_SIZE[pair.replace(/_q8_K$/, '')]),
  y: bytesOf(yf).subarray(0, (+n / QK) * 292),
  what: `${xf} . ${yf} n=${n}`,
  bits: parseInt(hex, 16),
}));
const EDGE = floatsOf('edge/edge.f32');
const EDGE_V8 = bytesOf('edge/edge_v.q8_K.bin');
/** The 155 dots of the edge set: super-blocks [start, start + count) of edge.<t>.bin and edge_v. */
const EDGE_DOTS = tsv('edge/dots.tsv').map(([pair, start, count, hex]) => {
  const type = pair.replace(/_q8_K$/, ''),
    ts = K.TYPE_SIZE[type];
  return {
    type,
    x: bytesOf(`edge/edge.${type}.bin`).subarray(+start * ts, (+start + +count) * ts),
    y: EDGE_V8.subarray(+start * 292, (+start + +count) * 292),
    what: `edge super-blocks ${start}..${+start + +count - 1}`,
    bits: parseInt(hex, 16),
  };
});

/** a with the byte ranges ggml leaves unwritten copied from want (nothing to compare there). */
function masked(a, want, ranges) {
  const out = a.slice();
  for (const [s, e] of ranges) out.set(want.subarray(s, e), s);
  return out;
}

const hex = (u) => `0x${(u >>> 0).toString(16).padStart(8, '0')}`;

test('golden-k fixtures are the files the manifest describes', () => {
  const sha = (rel) => createHash('sha256').update(file(rel)).digest('hex');
  for (const inp of manifest.inputs) assert.equal(sha(inp.file), inp.sha256, inp.file);
  assert.equal(QUANTIZED.length, 48);
  for (const q of QUANTIZED) {
    assert.equal(sha(q.quant_file), q.quant_sha256, q.quant_file);
    assert.equal(sha(q.dequant_file), q.dequant_sha256, q.dequant_file);
  }
  assert.equal(DOTS.length, 120);
  assert.equal(EDGE_DOTS.length, 155);
});

test('oracle-k quantize and dequantize equal ggml on every golden input, edge set included', () => {
  for (const q of QUANTIZED) {
    const x = floatsOf(`inputs/${q.input}.f32`);
    const want = bytesOf(q.quant_file);
    const got = masked(K.quantize(q.type, x), want, q.unspecified_byte_ranges);
    const d = firstDiff(got, want);
    assert.equal(d, -1, `${q.quant_file}: byte ${d} (super-block ${Math.floor(d / K.TYPE_SIZE[q.type])})`);
    const dq = firstDiff(K.dequantize(q.type, want), floatsOf(q.dequant_file));
    assert.equal(dq, -1, `${q.dequant_file}: value ${dq}`);
  }
  for (const t of ALL) {
    const want = bytesOf(`edge/edge.${t}.bin`);
    const d = firstDiff(K.quantize(t, EDGE), want);
    assert.equal(d, -1, `edge.${t}.bin: byte ${d} (super-block ${Math.floor(d / K.TYPE_SIZE[t])})`);
    const dq = firstDiff(K.dequantize(t, want), floatsOf(`edge/edge.${t}.f32`));
    assert.equal(dq, -1, `edge.${t}.f32: value ${dq}`);
  }
  assert.equal(firstDiff(K.quantizeQ8K(floatsOf('edge/edge_v.f32')), EDGE_V8), -1, 'edge_v.q8_K.bin');
});

test('oracle-k dots equal ggml_vec_dot_<t>_q8_K_generic on all 275 golden dots', () => {
  for (const g of [...DOTS, ...EDGE_DOTS]) {
    const got = K.bitsOf(K.dotQ8K(g.type, g.x, g.y).sum);
    assert.equal(hex(got), hex(g.bits), `${g.type} ${g.what}`);
  }
});

// ---- The build's K kernels ----------------------------------------------------------------------

const bq = await testCodec();
const X = /** @type {Record<string, any>} */ (bq.exports);
const raw = new Raw(bq.exports);
const ISAS = ['', '__ref', '__simd128'];

/** The kernels K-quants need, by base name: [type, op, second type]. */
const BASES = ALL.flatMap((t) => [
  [`bq_${t}_quantize`, t, 'quantize', null],
  [`bq_${t}_dequantize`, t, 'dequantize', null],
  ...(t === 'q8_K' ? [] : [[`bq_${t}_dot_q8_K`, t, 'dot', 'q8_K']]),
  [`bq_${t}_dot_f32`, t, 'dot', 'f32'],
]);
/** Matrix-vector products, tested where the build exports them (src/kernels.inc decides). */
const MATVECS = K.KTYPES.flatMap((t) => [
  [`bq_${t}_matvec_q8_K`, t, 'matvec', 'q8_K'],
  [`bq_${t}_matvec_f32`, t, 'matvec', 'f32'],
]);
/** What must have a SIMD128 version on the simd128 build: the decoders, both dots of every K type
 * and the Q8_K activation quantizer. */
const NEED_SIMD = K.KTYPES.flatMap((t) => [`bq_${t}_dequantize`, `bq_${t}_dot_q8_K`, `bq_${t}_dot_f32`]).concat(
  'bq_q8_K_quantize',
);
const variants = (base) => ISAS.filter((s) => typeof X[base + s] === 'function').map((s) => base + s);
const isaOf = (name) => (name.endsWith('__ref') ? '__ref' : name.endsWith('__simd128') ? '__simd128' : '');
/** Bit-exact against ggml's order: the reference, and the public kernel of the scalar build. */
const exactDot = (name) => isaOf(name) === '__ref' || (isaOf(name) === '' && BACKEND === 'scalar');

if (typeof X.bq_q4_K_dequantize__ref !== 'function') {
  test(`K kernels on the ${BACKEND} build`, () => {
    assert.fail(
      'the K kernels are not wasm exports: bq_q4_K_dequantize__ref is missing. Add Q2_K..Q6_K and Q8_K ' +
        '(quantize, dequantize, dot_q8_K, dot_f32) to src/kernels.inc and rebuild (make).',
    );
  });
} else {
  const bytesPer = (t) => (t === 'f32' ? 4 : K.TYPE_SIZE[t] / QK);

  /** Gaussian floats whose scale changes per super-block (1e-2..1e2), with 5% outliers x20. */
  const realFloats = (nb, r) => {
    const x = new Float32Array(nb * QK);
    for (let b = 0; b < nb; b++) {
      const s = 10 ** (4 * r.next() - 2);
      for (let e = 0; e < QK; e++) x[b * QK + e] = r.normal() * s * (r.next() < 0.05 ? 20 : 1);
    }
    return x;
  };
  /** Realistic super-blocks, and one in three replaced by a random super-block of the edge set. */
  const mixedFloats = (nb, r) => {
    const x = realFloats(nb, r);
    for (let b = 0; b < nb; b++)
      if (r.next() < 1 / 3) {
        const k = Math.floor(r.next() * 16);
        x.set(EDGE.subarray(k * QK, (k + 1) * QK), b * QK);
      }
    return x;
  };
  /**
   * Any float32 bits, super-block by super-block: all random, random within 2^-27..2^33, or nine
   * in ten zero. A NaN becomes the default NaN of either sign: ggml's codes for a NaN input come
   * from its payload on x86-64, which wasm arithmetic does not promise to carry.
   */
  const hostileFloats = (nb, r) => {
    const u = new Uint32Array(nb * QK);
    for (let b = 0; b < nb; b++)
      for (let e = 0; e < QK; e++) {
        let v = (r.next() * 2 ** 32) >>> 0;
        if (b % 3 === 1) v = (v & 0x807fffff) | ((100 + Math.floor(r.next() * 60)) << 23);
        if (b % 3 === 2 && r.next() < 0.9) v = 0;
        if ((v & 0x7f800000) === 0x7f800000 && v & 0x7fffff) v = r.next() < 0.5 ? 0x7fc00000 : 0xffc00000;
        u[b * QK + e] = v;
      }
    return new Float32Array(u.buffer);
  };
  const randomBytes = (len, r) => new Uint8Array(len).map(() => (r.next() * 256) | 0);
  /** Q8_K blocks with random qs and random bsums (not their sums) and a finite d of 1e-3..1. */
  const wildQ8K = (nb, r) => {
    const y = randomBytes(nb * 292, r);
    const v = new DataView(y.buffer);
    for (let b = 0; b < nb; b++) v.setFloat32(b * 292, (r.next() < 0.5 ? -1 : 1) * 10 ** (-3 * r.next()), true);
    return y;
  };

  /**
   * Runs a kernel that reads input and writes outLen bytes; returns them. The output is prefilled
   * with 0xA5 (a kernel must not depend on it) and followed by 64 guard bytes; the kernel must
   * write none of those and must leave its input as it was.
   */
  const runOut = (name, input, n, outLen) => {
    raw.reset();
    const inBytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    const ip = raw.put(inBytes),
      op = raw.alloc(outLen + 64);
    new Uint8Array(raw.mem.buffer, op, outLen + 64).fill(0xa5);
    assert.equal(X[name](ip, op, n), 0, `${name} n=${n} returns BQ_OK`);
    assert.ok(
      new Uint8Array(raw.mem.buffer, op + outLen, 64).every((c) => c === 0xa5),
      `${name} n=${n} writes past its output`,
    );
    assert.equal(firstDiff(raw.bytes(ip, inBytes.length), inBytes), -1, `${name} n=${n} changes its input`);
    return raw.bytes(op, outLen);
  };
  const quantizeWith = (name, t, x) => runOut(name, x, x.length, (x.length / QK) * K.TYPE_SIZE[t]);
  const dequantizeWith = (name, t, q) => {
    const n = (q.length / K.TYPE_SIZE[t]) * QK;
    const b = runOut(name, q, n, 4 * n);
    return new Float32Array(b.buffer, b.byteOffset, n);
  };

  /** Dot of n elements of a (type t) and b (type t2), fed in pieces cut at `cuts` (elements). */
  const dotWith = (name, t, t2, a, b, cuts = []) => {
    const n = (a.length / bytesPer(t)) | 0;
    raw.reset();
    const ap = raw.put(a),
      bp = raw.put(b),
      acc = raw.zeroAcc();
    let prev = 0;
    for (const c of [...cuts, n]) {
      const rc = X[name](ap + prev * bytesPer(t), bp + prev * bytesPer(t2), c - prev, acc);
      assert.equal(rc, 0, `${name} [${prev}, ${c}) returns BQ_OK`);
      prev = c;
    }
    const isa = isaOf(name);
    return X[isa ? `bq_acc_sum${isa}` : `${name}_sum`](acc);
  };

  /** A dot result against the oracle's: same bits where the order is ggml's, else within
   * 1e-5 * sum |terms|; a non-finite oracle result (Inf or NaN terms) wants a non-finite one. */
  const checkDot = (name, got, want, what) => {
    if (exactDot(name))
      assert.ok(
        sameFloat(got, want.sum),
        `${name} ${what}: ${got} (${hex(K.bitsOf(got))}) vs oracle ${want.sum} (${hex(K.bitsOf(want.sum))}), seed ${SEED}`,
      );
    else if (Number.isFinite(want.sum))
      assert.ok(
        Math.abs(got - want.sum) <= 1e-5 * want.abs,
        `${name} ${what}: ${got} vs oracle ${want.sum} (sum |terms| ${want.abs}), seed ${SEED}`,
      );
    else assert.ok(!Number.isFinite(got), `${name} ${what}: ${got}, the oracle's terms give ${want.sum}, seed ${SEED}`);
  };
  const oracleDot = (t, t2, a, b) => (t2 === 'q8_K' ? K.dotQ8K(t, a, b) : K.dotF32(t, a, b));

  test(`the ${BACKEND} build exports every K kernel, public and __ref`, () => {
    for (const [base] of BASES) {
      const vs = variants(base).map(isaOf);
      assert.ok(vs.includes('') && vs.includes('__ref'), `${base} and ${base}__ref are exported`);
      if (BACKEND === 'scalar') assert.ok(!vs.includes('__simd128'), `${base}: no SIMD in the scalar build`);
      if (base.includes('_dot_')) assert.equal(typeof X[`${base}_sum`], 'function', `${base}_sum is exported`);
    }
    if (BACKEND === 'simd128')
      for (const base of NEED_SIMD) assert.equal(typeof X[`${base}__simd128`], 'function', `${base}__simd128 exists`);
    for (const t of ALL) {
      assert.equal(X.bq_type_block_size(ID[t]), QK, `${t} block size`);
      assert.equal(X.bq_type_size(ID[t]), K.TYPE_SIZE[t], `${t} type size`);
    }
  });

  for (const [base, t, op, t2] of [...BASES, ...MATVECS]) {
    const vs = variants(base);
    if (!vs.length) continue; // the export test above names what is missing
    const r = rng(SEED ^ base.length ^ (ID[t] << 8));
    test(`${base} (${vs.map((v) => isaOf(v) || 'public').join(', ')}) on the ${BACKEND} build, seed ${SEED}`, () => {
      // Anything but whole super-blocks: BQ_EINVAL, nothing written.
      for (const v of vs) {
        raw.reset();
        const p = raw.alloc(4096),
          acc = raw.zeroAcc();
        new Uint8Array(raw.mem.buffer, p, 4096).fill(0x5a);
        const rc =
          op === 'dot' ? X[v](p, p, 128, acc) : op === 'matvec' ? X[v](p, 2, 128, p, p + 2048) : X[v](p, p + 2048, 128);
        assert.notEqual(rc, 0, `${v} n=128 fails`);
        assert.ok(
          new Uint8Array(raw.mem.buffer, p, 4096).every((c) => c === 0x5a) &&
            new Float32Array(raw.mem.buffer, acc, X.bq_acc_lanes()).every((c) => c === 0),
          `${v} n=128 writes nothing`,
        );
      }
      if (op === 'quantize') testQuantize(t, vs, r);
      else if (op === 'dequantize') testDequantize(t, vs, r);
      else if (op === 'dot') testDot(t, /** @type {string} */ (t2), vs, r);
      else testMatvec(t, /** @type {string} */ (t2), vs, r);
    });
  }

  /** quantize: bit-exact with the oracle and with ggml's files, every variant. */
  function testQuantize(t, vs, r) {
    const ts = K.TYPE_SIZE[t];
    // Q8_K leaves an all-zero super-block's bsums unwritten, as ggml does: not compared there.
    const unwritten = (x) =>
      t !== 'q8_K'
        ? []
        : Array.from({ length: x.length / QK }, (_, b) => b)
            .filter((b) => x.subarray(b * QK, (b + 1) * QK).every((v) => v === 0))
            .map((b) => [b * ts + 260, b * ts + 292]);
    /** @type {{ x: Float32Array, what: string, want?: Uint8Array }[]} */
    const cases = [
      ...COUNTS.map((nb) => ({ x: mixedFloats(nb, r), what: `${nb} super-blocks` })),
      ...[1, 3, 9, 65].map((nb) => ({ x: hostileFloats(nb, r), what: `${nb} super-blocks of any float bits` })),
      { x: EDGE, what: 'edge set', want: bytesOf(`edge/edge.${t}.bin`) },
      ...QUANTIZED.filter((q) => q.type === t).map((q) => ({
        x: floatsOf(`inputs/${q.input}.f32`),
        what: q.quant_file,
        want: bytesOf(q.quant_file),
      })),
    ];
    for (const c of cases) {
      const want = c.want ?? K.quantize(t, c.x);
      for (const v of vs) {
        const got = masked(quantizeWith(v, t, c.x), want, unwritten(c.x));
        const d = firstDiff(got, want);
        assert.equal(d, -1, `${v} ${c.what}: byte ${d} (super-block ${Math.floor(d / ts)}) differs, seed ${SEED}`);
      }
    }
  }

  /** dequantize: bit-exact with the oracle on any bytes, and with ggml's files. */
  function testDequantize(t, vs, r) {
    const ts = K.TYPE_SIZE[t];
    // Every class of fp16 (fp32 for Q8_K) scale: zeros, subnormals, the normal extremes, Inf, NaN.
    const specials = [0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7d01];
    const special = randomBytes(specials.length ** 2 * ts, r);
    for (let i = 0; i < specials.length ** 2; i++) {
      const [d, m] = [specials[i % specials.length], specials[Math.floor(i / specials.length)]];
      const o = i * ts;
      const put = (at, h) => ((special[o + at] = h & 255), (special[o + at + 1] = h >> 8));
      if (t === 'q2_K') (put(80, d), put(82, m));
      else if (t === 'q3_K') put(108, d);
      else if (t === 'q4_K' || t === 'q5_K') (put(0, d), put(2, m));
      else if (t === 'q6_K') put(208, d);
      else new DataView(special.buffer).setFloat32(o, K.fromHalf(d), true);
    }
    /** @type {{ q: Uint8Array, what: string, want?: Float32Array }[]} */
    const cases = [
      ...COUNTS.map((nb) => ({ q: randomBytes(nb * ts, r), what: `${nb} random super-blocks` })),
      ...COUNTS.map((nb) => ({ q: K.quantize(t, mixedFloats(nb, r)), what: `${nb} quantized super-blocks` })),
      { q: special, what: 'every class of d and dmin' },
      { q: bytesOf(`edge/edge.${t}.bin`), what: 'edge set', want: floatsOf(`edge/edge.${t}.f32`) },
      ...QUANTIZED.filter((q) => q.type === t).map((q) => ({
        q: bytesOf(q.quant_file),
        what: q.quant_file,
        want: floatsOf(q.dequant_file),
      })),
    ];
    for (const c of cases) {
      const want = c.want ?? K.dequantize(t, c.q);
      for (const v of vs) {
        const d = firstDiff(dequantizeWith(v, t, c.q), want);
        assert.equal(d, -1, `${v} ${c.what}: value ${d} (super-block ${d >> 8}) differs, seed ${SEED}`);
      }
    }
  }

  /** dot with Q8_K or f32 values, against the oracle and ggml's results; cut equals uncut. */
  function testDot(t, t2, vs, r) {
    const ts = K.TYPE_SIZE[t];
    const step = Math.max(QK, X.bq_type_dot_step(ID[t]), t2 === 'f32' ? 0 : X.bq_type_dot_step(ID.q8_K));
    const other = (nb, kind) =>
      t2 === 'f32'
        ? kind === 'random'
          ? new Float32Array(randomBytes(nb * QK * 4, r).buffer)
          : realFloats(nb, r)
        : kind === 'random'
          ? randomBytes(nb * 292, r)
          : kind === 'wild'
            ? wildQ8K(nb, r)
            : K.quantizeQ8K(realFloats(nb, r));
    // Any x bytes, except that Q8_K's fp32 d (the K types' fp16 d cannot) would make finite
    // products overflow in some orders and not in others: a finite |d| > 1e12 becomes 1e-3..1e3.
    // NaN, Inf, subnormal and zero d stay.
    const randomX = (nb) => {
      const a = randomBytes(nb * ts, r);
      const v = new DataView(a.buffer);
      if (t === 'q8_K')
        for (let b = 0; b < nb; b++)
          if (Number.isFinite(v.getFloat32(b * ts, true)) && Math.abs(v.getFloat32(b * ts, true)) > 1e12)
            v.setFloat32(b * ts, (r.next() < 0.5 ? -1 : 1) * 10 ** (6 * r.next() - 3), true);
      return a;
    };
    const cases = [];
    for (const nb of COUNTS) {
      const real = t === 'q8_K' ? K.quantizeQ8K(mixedFloats(nb, r)) : K.quantize(t, mixedFloats(nb, r));
      cases.push({ a: real, b: other(nb, 'real'), what: `${nb} realistic super-blocks` });
      cases.push({ a: randomX(nb), b: other(nb, 'real'), what: `${nb} random super-blocks` });
      if (t2 === 'q8_K')
        cases.push({ a: real, b: other(nb, 'wild'), what: `${nb} super-blocks, Q8_K bsums not its sums` });
      // Any bytes on both sides: only where the order is ggml's (elsewhere overflow depends on it).
      cases.push({ a: randomBytes(nb * ts, r), b: other(nb, 'random'), what: `${nb} random pairs`, exactOnly: true });
    }
    if (t2 === 'q8_K') {
      for (const g of [...DOTS, ...EDGE_DOTS].filter((g) => g.type === t))
        cases.push({ a: g.x, b: g.y, what: `golden ${g.what}`, bits: g.bits });
    }
    for (const c of cases) {
      const want = oracleDot(t, t2, c.a, c.b);
      if (c.bits !== undefined) assert.equal(hex(K.bitsOf(want.sum)), hex(c.bits), `oracle ${c.what}`);
      const n = (c.a.length / ts) * QK;
      for (const v of vs) {
        if (c.exactOnly && !exactDot(v)) continue;
        const got = dotWith(v, t, t2, c.a, c.b);
        checkDot(v, got, want, c.what);
        // Cut on multiples of the dot step: after the first step, in the middle, and (for a few
        // super-blocks) at every step. The result is the same bits.
        const cutSets = [];
        if (n > 2 * step) cutSets.push([step, Math.floor(n / (2 * step)) * step]);
        if (n > step && n <= 9 * QK)
          cutSets.push(Array.from({ length: Math.ceil(n / step) - 1 }, (_, k) => (k + 1) * step));
        for (const cuts of cutSets) {
          const cut = dotWith(v, t, t2, c.a, c.b, cuts);
          assert.ok(sameFloat(cut, got), `${v} ${c.what}: cut at ${cuts} gives ${cut}, uncut ${got}, seed ${SEED}`);
        }
      }
    }
  }

  /** nb random super-blocks of t whose d (and dmin) are random finite halves of 2^-14..2. */
  function finiteScales(t, nb, r) {
    const ts = K.TYPE_SIZE[t];
    const q = randomBytes(nb * ts, r);
    const at = { q2_K: [80, 82], q3_K: [108], q4_K: [0, 2], q5_K: [0, 2], q6_K: [208] }[t];
    for (let b = 0; b < nb; b++)
      for (const o of at) {
        const h = 0x0400 + Math.floor(r.next() * 0x3c00); // exponents 1..15: 2^-14 <= |d| < 2
        q[b * ts + o] = h & 255;
        q[b * ts + o + 1] = (h >> 8) | (r.next() < 0.5 ? 0x80 : 0);
      }
    return q;
  }

  /** matvec: row r equals the dot of the same ISA exactly, and the oracle's dot as a dot would. */
  function testMatvec(t, t2, vs, r) {
    const ts = K.TYPE_SIZE[t];
    // Rows of 1, 3 and 16 super-blocks quantized from floats, then rows just past the lengths the
    // SIMD matvecs prepare activations for (64 and 512 super-blocks when this was written) as
    // random blocks with finite scales.
    const shapes = [QK, 3 * QK, 16 * QK].flatMap((cols) => [1, 2, 5].map((rows) => ({ rows, cols, real: true })));
    shapes.push({ rows: 2, cols: 65 * QK, real: false });
    if (t2 === 'q8_K') shapes.push({ rows: 1, cols: 513 * QK, real: false });
    for (const { rows, cols, real } of shapes) {
      const w = real ? K.quantize(t, realFloats((rows * cols) / QK, r)) : finiteScales(t, (rows * cols) / QK, r);
      const xv = t2 === 'f32' ? realFloats(cols / QK, r) : K.quantizeQ8K(realFloats(cols / QK, r));
      const rb = (cols / QK) * ts;
      for (const v of vs) {
        raw.reset();
        const wp = raw.put(w),
          xp = raw.put(xv),
          yp = raw.alloc(rows * 4 + 64);
        new Uint8Array(raw.mem.buffer, yp, rows * 4 + 64).fill(0xa5);
        assert.equal(X[v](wp, rows, cols, xp, yp), 0, `${v} ${rows}x${cols} returns BQ_OK`);
        assert.ok(
          new Uint8Array(raw.mem.buffer, yp + rows * 4, 64).every((c) => c === 0xa5),
          `${v} writes past y`,
        );
        const y = raw.floats(yp, rows);
        const dot = `bq_${t}_dot_${t2}${isaOf(v)}`;
        for (let i = 0; i < rows; i++) {
          const row = w.subarray(i * rb, (i + 1) * rb);
          const d = dotWith(dot, t, t2, row, xv);
          assert.ok(sameFloat(y[i], d), `${v} ${rows}x${cols} row ${i}: ${y[i]} vs ${dot} ${d}, seed ${SEED}`);
          checkDot(dot, y[i], oracleDot(t, t2, row, xv), `as row ${i} of ${v} ${rows}x${cols}`);
        }
      }
    }
  }
}
