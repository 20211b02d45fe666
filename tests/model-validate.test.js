// js/model/validate.js (ggml_validate_row_data) against a plain reference written here: F16,
// BF16 and F32 values at every length 0..40 and at odd byte offsets with a NaN or Inf at each
// position (the two-at-a-time scan must find the first), and the scale fields of every quantized
// type blockquant writes. Whether llama refuses the same data is tests/model-quantize's "invalid
// data" group.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidBlock } from '../js/model/validate.js';
import { GGMLType as T, typeInfo, typeId } from '../js/index-node.js';
import { rng, SEED } from './lib/helpers.js';

console.log(`model-validate: seed ${SEED}`);

/**
 * The reference: the first non-finite 16-bit float, by its exponent.
 * @param {Uint16Array} h @param {number} exp @param {number} mant
 */
function first16(h, exp, mant) {
  for (let i = 0; i < h.length; i++) if ((h[i] & exp) === exp) return { block: i, what: h[i] & mant ? 'nan' : 'inf' };
  return null;
}

test('F16 and BF16: the first NaN or Inf, at any length, position and byte offset', () => {
  const r = rng(SEED);
  for (const [type, exp, mant, specials] of /** @type {const} */ ([
    [T.F16, 0x7c00, 0x3ff, [0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xffff]],
    [T.BF16, 0x7f80, 0x7f, [0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffff]],
  ]))
    for (let n = 0; n <= 40; n++)
      for (const shift of [0, 1, 2, 3]) {
        for (let pos = -1; pos < n; pos++) {
          const buf = new Uint8Array(2 * n + shift);
          const h = new Uint16Array(n);
          // Finite values, some with the largest exponent below the limit.
          for (let i = 0; i < n; i++)
            h[i] = (Math.floor(r.next() * 0x10000) & ~exp) | (r.next() < 0.3 ? exp - (exp & -exp) : 0);
          if (pos >= 0) h[pos] = specials[pos % specials.length];
          if (pos >= 0 && pos + 2 < n) h[pos + 2] = specials[(pos + 1) % specials.length];
          buf.set(new Uint8Array(h.buffer), shift);
          const bytes = buf.subarray(shift);
          assert.deepEqual(
            invalidBlock(type, bytes),
            first16(h, exp, mant),
            `${typeInfo(type).name} n ${n} pos ${pos} shift ${shift}`,
          );
        }
      }
});

test('F32: the first NaN or Inf', () => {
  for (let n = 0; n < 20; n++)
    for (let pos = -1; pos < n; pos++) {
      const f = Float32Array.from({ length: n }, (_, i) => (i % 2 ? 3.4e38 : -1e-40));
      if (pos >= 0) f[pos] = pos % 2 ? NaN : -Infinity;
      const want = pos < 0 ? null : { block: pos, what: pos % 2 ? 'nan' : 'inf' };
      assert.deepEqual(invalidBlock(T.F32, new Uint8Array(f.buffer)), want, `n ${n} pos ${pos}`);
    }
});

test("quantized blocks: an Inf or NaN d (and m, dmin) is refused, other bytes never; MXFP4's e 0xff", () => {
  const cases = /** @type {[string, number[]][]} */ ([
    ['q4_0', [0]],
    ['q4_1', [0, 2]],
    ['q5_0', [0]],
    ['q5_1', [0, 2]],
    ['q8_0', [0]],
    ['q2_K', [80, 82]],
    ['q3_K', [108]],
    ['q4_K', [0, 2]],
    ['q5_K', [0, 2]],
    ['q6_K', [208]],
    ['iq4_nl', [0]],
    ['iq4_xs', [0]],
    ['iq3_s', [0]],
    ['iq3_xxs', [0]],
    ['tq1_0', [52]],
    ['tq2_0', [64]],
    ['q1_0', [0]],
    ['q2_0', [0]],
  ]);
  for (const [name, offsets] of cases) {
    const id = typeId(name);
    const t = typeInfo(id);
    const blocks = new Uint8Array(3 * t.typeSize).fill(0x3c); // 0x3c3c: a finite f16 (1.06)
    assert.equal(invalidBlock(id, blocks), null, `${name}: finite`);
    for (const o of offsets)
      for (const [v, what] of /** @type {const} */ ([
        [0x7c00, 'inf'],
        [0xfe00, 'nan'],
      ])) {
        const b = blocks.slice();
        new DataView(b.buffer).setUint16(t.typeSize + o, v, true);
        assert.deepEqual(invalidBlock(id, b), { block: 1, what }, `${name} field at ${o}`);
      }
  }
  const mx = new Uint8Array(17 * 2);
  mx[17] = 0xff;
  assert.deepEqual(invalidBlock(T.MXFP4, mx), { block: 1, what: 'e' });
  assert.equal(invalidBlock(T.NVFP4, new Uint8Array(36).fill(0xff)), null);
  assert.equal(invalidBlock(T.I32, new Uint8Array(8).fill(0xff)), null);
});
