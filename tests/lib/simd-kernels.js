// Shared by the tests of SIMD128 kernels against their references through a build's raw exports
// (kquants-simd-236, kquants-simd-45, iquants-simd): which kernels the build has, test
// registration, random and edge inputs, reference calls, dot states fed whole or in pieces, and the
// 1e-5 closeness check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKEND } from './helpers.js';

/** fp16 scales: zeros, Inf, NaNs (quiet, signalling, with payloads), subnormals, the extreme
 * normals, one. */
export const EDGE_HALVES = [
  0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe5a, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00,
];

/** The value of the fp16 bits h, in a double. */
export function half(h) {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    m = h & 1023;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** n random bytes: every bit pattern, NaN/Inf/subnormal scales included. */
export function randomBytes(n, r) {
  const b = new Uint8Array(n);
  for (let i = 0; i < b.length; i++) b[i] = (r.next() * 256) | 0;
  return b;
}

/** n gaussian floats with heavy tails (one in 20 scaled by 30). */
export function gaussian(n, r) {
  return new Float32Array(n).map(() => r.normal() * (r.next() < 0.05 ? 30 : 1));
}

/** |got - want| <= 1e-5 * bound when the bound is finite; otherwise both non-finite. */
export function assertClose(got, want, bound, what) {
  if (Number.isFinite(bound)) {
    assert.ok(Number.isFinite(want), `${what}: reference ${want} with finite terms`);
    assert.ok(Math.abs(got - want) <= 1e-5 * bound, `${what}: ${got} vs reference ${want} (sum |terms| ${bound})`);
  } else {
    assert.ok(
      !Number.isFinite(got) && !Number.isFinite(want),
      `${what}: ${got} vs reference ${want}, non-finite terms`,
    );
  }
}

/**
 * The kernel calls of one build: X its exports, raw a Raw over them (tests/lib/raw.js).
 * @param {Record<string, any>} X
 * @param {import('./raw.js').Raw} raw
 */
export function simdKernels(X, raw) {
  const has = (name) => typeof X[name] === 'function';
  const laneSum = (name) => (name.endsWith('__ref') ? X.bq_acc_sum__ref : X.bq_acc_sum__simd128);

  /**
   * Registers the test that the build has every SIMD128 kernel of kernels ({ format: ops }) on the
   * SIMD build and none on the scalar one. With ifRef, a format counts only once its reference
   * dequantizer is exported, and at least one must be.
   */
  function presenceTest(title, kernels, ifRef = false) {
    test(title, () => {
      let checked = 0;
      for (const [f, ops] of Object.entries(kernels)) {
        if (ifRef && !has(`bq_${f}_dequantize__ref`)) continue;
        checked++;
        for (const op of ops) {
          const name = `bq_${f}_${op}__simd128`;
          if (BACKEND === 'simd128') assert.ok(has(name), `${name} is missing from the SIMD build`);
          else assert.ok(!has(name), `${name} in the scalar build`);
        }
      }
      if (ifRef)
        assert.ok(checked > 0, 'the build exports no reference for these formats (kernels.inc must list them)');
    });
  }

  /**
   * Registers fn as a test of SIMD kernels: on the SIMD build every name must be exported (a
   * missing one fails); the scalar build has none, which the presence test checks, so nothing is
   * registered.
   */
  function kernelTest(title, names, fn) {
    if (BACKEND !== 'simd128') return;
    test(title, (t) => {
      const missing = names.filter((n) => !has(n));
      assert.deepEqual(missing, [], `not exported: ${missing.join(', ')}`);
      return fn(t);
    });
  }

  /** Blocks of type t (bytes per block of blk elements) from x by its reference quantizer. */
  function quantizeRef(t, x, blk, bytes) {
    raw.reset();
    const xp = raw.put(x),
      yp = raw.alloc((x.length / blk) * bytes);
    assert.equal(X[`bq_${t}_quantize__ref`](xp, yp, x.length), 0);
    return raw.bytes(yp, (x.length / blk) * bytes);
  }

  /** The n values kernel name decodes from a (its output first filled with 0xee bytes). */
  function dequantizeWith(name, a, n) {
    raw.reset();
    const ap = raw.put(a),
      yp = raw.alloc(4 * n);
    new Uint8Array(raw.mem.buffer, yp, 4 * n).fill(0xee);
    assert.equal(X[name](ap, yp, n), 0);
    return raw.floats(yp, n);
  }

  /**
   * The dot state after feeding a and b to kernel name, whole or (pieces) cut at random multiples
   * of per blocks (1 to 3 of them); xs, ys: bytes of a and b per block of blk elements; sum reads
   * the state's result (by default the lane sum of the kernel's ISA).
   */
  function dotState(name, a, b, { xs, ys, blk, per = 1, sum = laneSum(name) }, r, pieces) {
    raw.reset();
    const nb = a.length / xs;
    const ap = raw.put(a),
      bp = raw.put(b),
      acc = raw.zeroAcc();
    for (let i = 0; i < nb;) {
      const k = pieces ? Math.min(nb - i, per * (1 + ((r.next() * 3) | 0))) : nb;
      assert.equal(X[name](ap + i * xs, bp + i * ys, k * blk, acc), 0);
      i += k;
    }
    return { sum: sum(acc), state: raw.floats(acc, X.bq_acc_lanes()) };
  }

  /**
   * The fused f32 dot of blocks a of type t (decoding to w by the reference) with x: the
   * reference's result, the SIMD128 kernel's state fed whole and in pieces (dotState, layout as
   * there), and bound = sum |w x| in doubles.
   */
  function f32DotCase(t, a, x, w, layout, r) {
    let bound = 0;
    for (let i = 0; i < w.length; i++) bound += Math.abs(w[i] * x[i]);
    const want = dotState(`bq_${t}_dot_f32__ref`, a, x, layout, r, false).sum;
    const whole = dotState(`bq_${t}_dot_f32__simd128`, a, x, layout, r, false);
    const cut = dotState(`bq_${t}_dot_f32__simd128`, a, x, layout, r, true);
    return { bound, want, whole, cut };
  }

  return { has, presenceTest, kernelTest, quantizeRef, dequantizeWith, dotState, f32DotCase };
}
