// Every kernel of the build under test, found from its exports (so a kernel added to
// src/kernels.inc is tested without touching this file): each variant (public, __ref, __simd128)
// against the JS oracle and against each other, bit-exact where the format fixes the result, at
// block counts around the SIMD tiles and with edge inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oracle from './lib/oracle.js';
import { Raw, kernelsOf } from './lib/raw.js';
import { BACKEND, BLOCK_COUNTS, SEED, testCodec, edgeInputs, firstDiff, rng, sameFloat } from './lib/helpers.js';
import { typeInfo, blockFields } from '../js/types.js';

const bq = await testCodec();
const raw = new Raw(bq.exports);
const kernels = kernelsOf(bq.exports);
/** @type {Map<string, typeof kernels>} */
const groups = new Map();
for (const k of kernels) groups.set(k.base, [...(groups.get(k.base) ?? []), k]);
const isFloat = (t) => t === 'f32' || t === 'f16' || t === 'bf16';
const per = (t) => oracle.SIZES[t][1] / oracle.SIZES[t][0];

/** Element counts to try: block counts for block types; odd lengths too for the float types. */
const lengths = (t) =>
  (isFloat(t) ? [1, 3, 7, 31, 32, 33, 127, 128, 129, 4101] : []).concat(
    BLOCK_COUNTS.map((b) => b * Math.max(32, typeInfo(t).blockSize)),
  );

/** Random bytes for n elements of t: every bit pattern, including NaN and Inf scales. */
function randomBytes(t, n, r) {
  const b = new Uint8Array(Math.ceil(n * per(t)));
  for (let i = 0; i < b.length; i++) b[i] = (r.next() * 256) | 0;
  return b;
}

/** Quantized blocks with finite, realistic scales (for dot tests whose bounds need finite sums). */
function realisticBytes(t, n, r) {
  const x = new Float32Array(n).map(() => r.normal() * (r.next() < 0.1 ? 20 : 1));
  return oracle.quantize(t, x);
}

test(`the ${BACKEND} build exports what kernels.inc lists`, () => {
  assert.equal(bq.backend, BACKEND);
  assert.ok(groups.size >= 50, `only ${groups.size} kernels found`);
  for (const [base, vs] of groups) {
    const isas = vs.map((v) => v.isa).sort();
    assert.ok(isas.includes('public') && isas.includes('ref'), `${base}: public and __ref exist`);
    if (BACKEND === 'scalar') assert.ok(!isas.includes('simd128'), `${base}: no SIMD in the scalar build`);
  }
  if (BACKEND === 'simd128') {
    // What the issue requires to be SIMD: dequantize of the five formats, the five vec_dot pairs,
    // the f32 dots, and the Q8_0/Q8_1 activation quantizers.
    const need = ['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0']
      .map((t) => `bq_${t}_dequantize`)
      .concat(
        ['q4_0_dot_q8_0', 'q4_1_dot_q8_1', 'q5_0_dot_q8_0', 'q5_1_dot_q8_1', 'q8_0_dot_q8_0'].map((p) => `bq_${p}`),
      )
      .concat(['f32', 'f16', 'bf16', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0', 'q8_1'].map((t) => `bq_${t}_dot_f32`))
      .concat(['bq_q8_0_quantize', 'bq_q8_1_quantize']);
    for (const base of need)
      assert.ok(
        groups.get(base)?.some((v) => v.isa === 'simd128'),
        `${base}__simd128 exists`,
      );
  }
});

const handlers = {
  quantize(t, vs, r) {
    for (const n of lengths(t)) {
      const x = n % 32 === 0 ? edgeInputs(n / 32, r.next() * 2 ** 32) : new Float32Array(n).map(() => r.normal() * 100);
      const want = oracle.quantize(t, x);
      for (const v of vs) {
        raw.reset();
        const xp = raw.put(x),
          yp = raw.alloc(want.length);
        assert.equal(bq.exports[v.name](xp, yp, n), 0);
        const d = firstDiff(raw.bytes(yp, want.length), want);
        assert.equal(d, -1, `${v.name} n=${n}: byte ${d} differs from the oracle`);
      }
    }
  },
  dequantize(t, vs, r) {
    for (const n of lengths(t)) {
      for (const q of [
        randomBytes(t, n, r),
        oracle.quantize(t, edgeInputs(Math.ceil(n / 32), r.next() * 2 ** 32).subarray(0, n)),
      ]) {
        const want = oracle.dequantize(t, q);
        for (const v of vs) {
          raw.reset();
          const qp = raw.put(q),
            yp = raw.alloc(n * 4);
          assert.equal(bq.exports[v.name](qp, yp, n), 0);
          const d = firstDiff(raw.floats(yp, n), want);
          assert.equal(d, -1, `${v.name} n=${n}: value ${d} differs from the oracle`);
        }
      }
    }
    if (isFloat(t)) return;
    // Every binary16 bit pattern as d (and, in the other order, as m), with random codes: the
    // kernels decode scales with their own fp16 conversions.
    const [qk, bs] = oracle.SIZES[t];
    const nb = 65536,
      q = randomBytes(t, nb * qk, r);
    for (let b = 0; b < nb; b++) {
      q[b * bs] = b & 255;
      q[b * bs + 1] = b >> 8;
      if (t === 'q4_1' || t === 'q5_1' || t === 'q8_1') {
        q[b * bs + 2] = (b * 40503) & 255;
        q[b * bs + 3] = ((b * 40503) >> 8) & 255;
      }
    }
    const want = oracle.dequantize(t, q);
    for (const v of vs) {
      raw.reset();
      const qp = raw.put(q),
        yp = raw.alloc(nb * qk * 4);
      assert.equal(bq.exports[v.name](qp, yp, nb * qk), 0);
      const d = firstDiff(raw.floats(yp, nb * qk), want);
      assert.equal(d, -1, `${v.name}, every fp16 scale: value ${d} (block ${d >> 5}) differs from the oracle`);
    }
  },
  dot(t, vs, r, t2) {
    const runs = (name, a, b, n, cuts = []) => {
      raw.reset();
      const ap = raw.put(a),
        bp = raw.put(b),
        acc = raw.zeroAcc();
      let prev = 0;
      for (const c of [...cuts, n]) {
        assert.equal(bq.exports[name](ap + prev * per(t), bp + prev * per(t2), c - prev, acc), 0);
        prev = c;
      }
      // Every variant's state is read by its pair's sum of the same ISA.
      const isa = name.endsWith('__ref') ? '__ref' : name.endsWith('__simd128') ? '__simd128' : '';
      return bq.exports[`${name.slice(0, name.length - isa.length)}_sum${isa}`](acc);
    };
    for (const n of lengths(t)) {
      const a = realisticBytes(t, n, r);
      const b = t2 === 'f32' ? new Float32Array(n).map(() => r.normal()) : realisticBytes(t2, n, r);
      const want = t2 === 'f32' ? oracle.dotF32(t, a, b) : oracle.vecDot([t, t2], a, new Uint8Array(b.buffer), n);
      for (const v of vs) {
        const got = runs(v.name, a, b, n);
        if (v.isa === 'ref' || (v.isa === 'public' && BACKEND === 'scalar')) {
          assert.ok(sameFloat(got, want.sum), `${v.name} n=${n}: ${got} vs oracle ${want.sum} (same order, same bits)`);
        } else {
          assert.ok(
            Math.abs(got - want.sum) <= 1e-5 * want.abs,
            `${v.name} n=${n}: ${got} vs ${want.sum} (sum|terms| ${want.abs})`,
          );
        }
        // Feeding the vector in pieces cut on multiples of the dot step changes nothing.
        const step = Math.max(typeInfo(t).dotStep, typeInfo(t2).dotStep);
        if (n > 2 * step) {
          const cut = runs(v.name, a, b, n, [step, Math.floor(n / (2 * step)) * step]);
          assert.ok(sameFloat(cut, got), `${v.name} n=${n}: cut ${cut} vs whole ${got}`);
        }
      }
    }
    // Any bytes at all, including NaN/Inf scales and -128 codes: every variant agrees with the
    // oracle on each single block's term (exact integer sums), and on NaN-ness.
    if (t2 !== 'f32') {
      const bs = typeInfo(t).blockSize;
      const a = randomBytes(t, 64 * bs, r),
        b = randomBytes(t2, 64 * bs, r);
      const xs = oracle.SIZES[t][1],
        ys = oracle.SIZES[t2][1];
      for (let k = 0; k < 64; k++) {
        const want = Math.fround(0 + oracle.blockTerm([t, t2], a, k * xs, b, k * ys).term);
        for (const v of vs) {
          const got = runs(v.name, a.subarray(k * xs, (k + 1) * xs), b.subarray(k * ys, (k + 1) * ys), bs);
          assert.ok(sameFloat(got, want), `${v.name} block ${k}: ${got} vs term ${want}`);
        }
      }
    }
  },
  matvec(t, vs, r, t2) {
    for (const cols of (isFloat(t) ? [1, 33, 200] : []).concat([32, 96, 256, 4096])) {
      for (const rows of [1, 2, 5]) {
        const w = realisticBytes(t, rows * cols, r);
        const x = new Float32Array(cols).map(() => r.normal());
        const xv = t2 === 'f32' ? x : oracle.quantize(t2, x);
        const rb = (cols / oracle.SIZES[t][0]) * oracle.SIZES[t][1];
        for (const v of vs) {
          raw.reset();
          const wp = raw.put(w),
            xp = raw.put(xv),
            yp = raw.alloc(rows * 4);
          assert.equal(bq.exports[v.name](wp, rows, cols, xp, yp), 0);
          const y = raw.floats(yp, rows);
          const isa = v.isa === 'public' ? '' : `__${v.isa}`;
          for (let i = 0; i < rows; i++) {
            const acc = raw.zeroAcc();
            bq.exports[`bq_${t}_dot_${t2}${isa}`](wp + i * rb, xp, cols, acc);
            const d = bq.exports[`bq_${t}_dot_${t2}_sum${isa}`](acc);
            assert.ok(sameFloat(y[i], d), `${v.name} ${rows}x${cols} row ${i}: ${y[i]} vs dot ${d}`);
          }
        }
      }
    }
  },
  stats(t, vs, r) {
    // Per block of the type (32 values for the float types) and, where the type has them, per
    // sub-block: the error of the oracle's round trip, and the block's d.
    const { blockSize, subBlock: S } = typeInfo(t);
    const B = blockSize > 1 ? blockSize : 32;
    const dField = blockFields(t)?.find((f) => f.name === 'd');
    const err = (x, dq, o, m) => {
      let ss = 0,
        mx = 0;
      for (let j = 0; j < m; j++) {
        const e = x[o + j] - dq[o + j];
        ss += e * e;
        mx = Math.abs(e) > mx || e !== e ? Math.abs(e) : mx;
      }
      return [Math.sqrt(ss / m), mx];
    };
    for (const count of BLOCK_COUNTS) {
      const n = Math.ceil((count * 32) / B) * B,
        nb = n / B,
        ns = S ? n / S : 0;
      const x = edgeInputs(n / 32, r.next() * 2 ** 32);
      const q = oracle.quantize(t, x);
      const dq = oracle.dequantize(t, q);
      const rmse = new Float32Array(nb),
        mx = new Float32Array(nb),
        sc = new Float32Array(nb),
        srmse = new Float32Array(ns),
        smx = new Float32Array(ns);
      for (let b = 0; b < nb; b++) {
        [rmse[b], mx[b]] = err(x, dq, b * B, B);
        const o = b * typeInfo(t).typeSize + (dField?.offset ?? 0);
        sc[b] = dField ? oracle.fromHalf(q[o] | (q[o + 1] << 8)) : NaN;
      }
      for (let k = 0; k < ns; k++) [srmse[k], smx[k]] = err(x, dq, k * S, S);
      for (const v of vs) {
        raw.reset();
        const xp = raw.put(x),
          rp = raw.alloc(nb * 4),
          mp = raw.alloc(nb * 4),
          sp = raw.alloc(nb * 4),
          srp = raw.alloc(ns * 4),
          smp = raw.alloc(ns * 4);
        assert.equal(bq.exports[v.name](xp, n, rp, mp, sp, srp, smp), 0);
        assert.equal(firstDiff(raw.floats(rp, nb), rmse), -1, `${v.name} nb=${nb}: rmse`);
        assert.equal(firstDiff(raw.floats(mp, nb), mx), -1, `${v.name} nb=${nb}: max |err|`);
        assert.equal(firstDiff(raw.floats(sp, nb), sc), -1, `${v.name} nb=${nb}: scale`);
        assert.equal(firstDiff(raw.floats(srp, ns), srmse), -1, `${v.name} nb=${nb}: sub-block rmse`);
        assert.equal(firstDiff(raw.floats(smp, ns), smx), -1, `${v.name} nb=${nb}: sub-block max |err|`);
      }
    }
  },
};

// The formats whose kernels another suite tests against its own model; every other kernel goes to
// this file's oracle, which throws for a format it does not model, so none is skipped silently.
const ELSEWHERE = {
  'kquants.test.js': ['q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K', 'q8_K'],
  'iquants.test.js': [
    'iq4_nl',
    'iq4_xs',
    'mxfp4',
    'tq1_0',
    'tq2_0',
    'iq2_xxs',
    'iq2_xs',
    'iq2_s',
    'iq3_xxs',
    'iq3_s',
    'iq1_s',
    'iq1_m',
  ],
  'newtypes.test.js': ['nvfp4', 'q1_0', 'q2_0'],
};
const elsewhere = new Set(Object.values(ELSEWHERE).flat());
for (const [base, vs] of groups) {
  const { op, type, type2 } = vs[0];
  if (elsewhere.has(type)) continue;
  test(`${base} (${vs.map((v) => v.isa).join(', ')}) on the ${BACKEND} build, seed ${SEED}`, () => {
    const handler = handlers[op];
    assert.ok(handler, `no test for kernel kind ${op}`);
    handler(type, vs, rng(SEED ^ base.length), type2);
  });
}

test(`the ${BACKEND} build's reference dot state is summed left to right over all lanes`, () => {
  // ggml's generic K-quant dots add eight float sums to the running sum in order at the end; the
  // reference keeps them in acc[1..] and bq_acc_sum__ref adds every lane in order.
  const lanes = bq.exports.bq_acc_lanes();
  assert.ok(lanes >= 9, `${lanes} lanes hold a running sum and eight sums`);
  raw.reset();
  const p = raw.zeroAcc();
  const acc = new Float32Array(raw.mem.buffer, p, lanes);
  const r = rng(SEED);
  for (let i = 0; i < lanes; i++) acc[i] = r.normal() * 2 ** ((r.next() * 40) | 0);
  let want = acc[0];
  for (let i = 1; i < lanes; i++) want = Math.fround(want + acc[i]);
  assert.ok(sameFloat(bq.exports.bq_acc_sum__ref(p), want), 'left-to-right sum');
});

test('kernels reject element counts that are not whole blocks', () => {
  raw.reset();
  const p = raw.alloc(4096);
  for (const k of kernels) {
    if (isFloat(k.type) && k.op !== 'stats') continue; // the float types take any length
    const st =
      k.op === 'matvec'
        ? bq.exports[k.name](p, 1, 33, p, p)
        : k.op === 'stats'
          ? bq.exports[k.name](p, 33, p, p, p, p, p)
          : k.op === 'dot'
            ? bq.exports[k.name](p, p, 33, p)
            : bq.exports[k.name](p, p, 33);
    assert.equal(st, -1, `${k.name} with 33 elements`);
  }
});

test(`f16/bf16 conversion kernels equal the reference over every 251st float bit pattern (${BACKEND} build)`, () => {
  // The scalar reference is checked against all 2^32 floats natively (tests/native/test_half.c);
  // here every variant of this build runs over 17 million patterns spread across the whole range.
  const CH = 1 << 20;
  for (const t of ['f16', 'bf16']) {
    const vs = groups.get(`bq_${t}_quantize`);
    raw.reset();
    const xp = raw.alloc(CH * 4),
      ref = raw.alloc(CH * 2),
      got = raw.alloc(CH * 2);
    let u = 0;
    for (let done = false; !done;) {
      const x = new Uint32Array(raw.mem.buffer, xp, CH);
      let n = 0;
      for (; n < CH && !done; n++) {
        x[n] = u;
        u += 251;
        if (u > 0xffffffff) done = true;
      }
      bq.exports[`bq_${t}_quantize__ref`](xp, ref, n);
      for (const v of vs) {
        bq.exports[v.name](xp, got, n);
        const a = new Uint16Array(raw.mem.buffer, ref, n),
          b = new Uint16Array(raw.mem.buffer, got, n);
        for (let i = 0; i < n; i++)
          if (a[i] !== b[i])
            assert.fail(`${v.name}(0x${x[i].toString(16)}) = ${b[i].toString(16)}, reference ${a[i].toString(16)}`);
      }
    }
  }
});

test(`f16/bf16 dequantize kernels equal the reference on every 16-bit pattern, in every grouping (${BACKEND} build)`, () => {
  // The SIMD128 f16 decoder takes groups of 16 halves with only normal exponents (1..30) on a short
  // path and any other group on a general one. Three orders of all 65536 patterns: ascending (the
  // groups are mostly all-normal or all-special), each normal pattern in a group with one zero,
  // subnormal, infinity or NaN (the general path on normal values), and ascending from an odd
  // offset with a length that leaves a scalar tail. Compared as bits: NaN payloads included.
  const N = 1 << 16;
  const special = (h) => ((h >> 10) & 31) === 0 || ((h >> 10) & 31) === 31;
  const asc = Uint16Array.from({ length: N }, (_, i) => i);
  const mixed = new Uint16Array(N);
  {
    const normals = [...asc].filter((h) => !special(h)),
      others = [...asc].filter(special);
    let n = 0,
      o = 0,
      k = 0;
    while (n < normals.length || o < others.length) {
      if (k % 16 === 5 && o < others.length) mixed[k++] = others[o++];
      else if (n < normals.length) mixed[k++] = normals[n++];
      else mixed[k++] = others[o++];
    }
  }
  const orders = [
    ['ascending', asc],
    ['one special half in each group of 16', mixed],
    ['from an odd offset, with a tail', asc.subarray(7, N - 3)],
  ];
  for (const t of ['f16', 'bf16']) {
    const vs = groups.get(`bq_${t}_dequantize`);
    assert.ok(vs.some((v) => v.isa === 'ref'));
    for (const [what, h] of orders) {
      raw.reset();
      const xp = raw.put(h),
        ref = raw.alloc(h.length * 4),
        got = raw.alloc(h.length * 4);
      assert.equal(bq.exports[`bq_${t}_dequantize__ref`](xp, ref, h.length), 0);
      for (const v of vs) {
        assert.equal(bq.exports[v.name](xp, got, h.length), 0);
        const a = new Uint32Array(raw.mem.buffer, ref, h.length),
          b = new Uint32Array(raw.mem.buffer, got, h.length);
        for (let i = 0; i < h.length; i++)
          if (a[i] !== b[i])
            assert.fail(
              `${v.name} (${what}) of 0x${h[i].toString(16)}: 0x${b[i].toString(16)}, reference 0x${a[i].toString(16)}`,
            );
      }
    }
  }
});
