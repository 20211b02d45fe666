// The inspector's lessons (demo/formula.js) in Node: the byte diagram's fields and offsets equal
// the layouts written out here from ../shared/reference/FORMATS.md and KQUANTS.md; for every block
// format, over many blocks (quantized and random bytes), each element's filled-in formula,
// evaluated here by a small float32 calculator (one rounding per operation, in the order the text
// groups them), gives bq.dequantize's value bit for bit, and so does its printed result; the code
// build-up names the bits ggml reads; a quantized tensor's float original is found by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LAYOUT_FORMATS, decodeBlock } from '../demo/layout.js';
import { gridTables } from '../demo/grids.js';
import { byteDiagram, elementBytes, explainElement, fmt32, originalOf } from '../demo/formula.js';
import { typeInfo, GGMLType } from '../js/index.js';
import { codec, rng, quantizeAny } from './lib/helpers.js';

const bq = await codec();
const grids = gridTables(bq);

/**
 * Evaluates a filled-in formula: numbers, + − · and parentheses, unary minus; every number and
 * every operation rounded to float32.
 * @param {string} s
 */
function evalF32(s) {
  const toks = s.replace(/\u2212/g, '-').match(/NaN|Infinity|\d+(?:\.\d+)?(?:e[+-]?\d+)?|[-+·()]/g) ?? [];
  assert.equal(toks.join(''), s.replace(/\u2212/g, '-').replace(/\s+/g, ''), `unexpected text in ${s}`);
  let i = 0;
  const f = Math.fround;
  const primary = () => {
    const t = toks[i++];
    if (t === '-') return -primary();
    if (t === '(') {
      const v = sum();
      assert.equal(toks[i++], ')', s);
      return v;
    }
    const v = Number(t);
    assert.ok(t !== undefined && !Number.isNaN(v) === (t !== 'NaN'), `bad token ${t} in ${s}`);
    return f(v);
  };
  const product = () => {
    let v = primary();
    while (toks[i] === '·') {
      i++;
      v = f(v * primary());
    }
    return v;
  };
  const sum = () => {
    let v = product();
    while (toks[i] === '+' || toks[i] === '-') {
      const op = toks[i++];
      const w = product();
      v = f(op === '+' ? v + w : v - w);
    }
    return v;
  };
  const v = sum();
  assert.equal(i, toks.length, `trailing text in ${s}`);
  return v;
}

const same = (a, b) => (Number.isNaN(b) ? Number.isNaN(a) : Object.is(a, b));

test('the float32 calculator rounds each operation', () => {
  assert.equal(evalF32('0.1 · 3'), Math.fround(Math.fround(0.1) * 3));
  assert.equal(evalF32('(2 − 8) · 0.5 + 1'), -2);
  assert.equal(evalF32('−0.5 · (3 − 8)'), 2.5);
  assert.ok(Object.is(evalF32('(−0) · 3'), -0));
});

test('fmt32: the shortest text that reads back as the same float32', () => {
  assert.equal(fmt32(Math.fround(0.1)), '0.1');
  assert.equal(fmt32(-0.5), '\u22120.5');
  assert.equal(fmt32(-0), '\u22120');
  assert.equal(fmt32(3), '3');
  assert.equal(fmt32(NaN), 'NaN');
  for (const x of [1e-40, 2 ** -128, 65504, 0.0123291015625, Math.fround(Math.PI)])
    assert.equal(Math.fround(Number(fmt32(x).replace('\u2212', '-'))), Math.fround(x));
});

// Field: [name, offset, size], from FORMATS.md (simple blocks) and KQUANTS.md / ggml-common.h.
const DIAGRAMS = {
  q4_0: [18, ['d', 0, 2], ['qs', 2, 16]],
  q4_1: [20, ['d', 0, 2], ['m', 2, 2], ['qs', 4, 16]],
  q5_0: [22, ['d', 0, 2], ['qh', 2, 4], ['qs', 6, 16]],
  q5_1: [24, ['d', 0, 2], ['m', 2, 2], ['qh', 4, 4], ['qs', 8, 16]],
  q8_0: [34, ['d', 0, 2], ['qs', 2, 32]],
  q2_K: [84, ['scales', 0, 16], ['qs', 16, 64], ['d', 80, 2], ['dmin', 82, 2]],
  q3_K: [110, ['hmask', 0, 32], ['qs', 32, 64], ['scales', 96, 12], ['d', 108, 2]],
  q4_K: [144, ['d', 0, 2], ['dmin', 2, 2], ['scales', 4, 12], ['qs', 16, 128]],
  q5_K: [176, ['d', 0, 2], ['dmin', 2, 2], ['scales', 4, 12], ['qh', 16, 32], ['qs', 48, 128]],
  q6_K: [210, ['ql', 0, 128], ['qh', 128, 64], ['scales', 192, 16], ['d', 208, 2]],
  iq4_nl: [18, ['d', 0, 2], ['qs', 2, 16]],
  iq4_xs: [136, ['d', 0, 2], ['scales_h', 2, 2], ['scales_l', 4, 4], ['qs', 8, 128]],
  mxfp4: [17, ['e', 0, 1], ['qs', 1, 16]],
  tq1_0: [54, ['qs', 0, 48], ['qh', 48, 4], ['d', 52, 2]],
  tq2_0: [66, ['qs', 0, 64], ['d', 64, 2]],
  nvfp4: [36, ['d', 0, 4], ['qs', 4, 32]],
  q1_0: [18, ['d', 0, 2], ['qs', 2, 16]],
  q2_0: [18, ['d', 0, 2], ['qs', 2, 16]],
};

test('the byte diagram: fields in order with their offsets and sizes', () => {
  for (const [fmt, [size, ...fields]] of Object.entries(DIAGRAMS)) {
    const d = byteDiagram(fmt);
    assert.equal(d.size, size, fmt);
    assert.deepEqual(
      d.fields.map((f) => [f.name, f.offset, f.size]),
      fields,
      fmt,
    );
    for (const f of d.fields) assert.equal(f.end, f.offset + f.size - 1);
    assert.equal(d.order, fields.map((f) => f[0]).join(' | '));
  }
  assert.equal(byteDiagram('q5_1').order, 'd | m | qh | qs');
});

test("the bytes an element's value is read from", () => {
  // Q5_0 element 20: d (0, 1), qh bit 20 (qh byte 2 at 2 + 2), the high nibble of qs[4] (6 + 4).
  assert.deepEqual(elementBytes('q5_0', 20), [0, 1, 4, 10]);
  // Q5_1 element 3: d, m, qh bit 3 (byte 4), qs[3] (8 + 3).
  assert.deepEqual(elementBytes('q5_1', 3), [0, 1, 2, 3, 4, 11]);
  // Q8_0 element 31: d and qs[31] (2 + 31).
  assert.deepEqual(elementBytes('q8_0', 31), [0, 1, 33]);
  // Q4_K element 200 (sub-block 6): d, dmin, scales[10] (4 + 10) for the low bits of sc_6 and m_6,
  // scales[2] and scales[6] for their top bits, qs[96 + 8] (16 + 104).
  assert.deepEqual(elementBytes('q4_K', 200), [0, 1, 2, 3, 4 + 2, 4 + 6, 4 + 10, 16 + 104]);
  // Q6_K element 0: ql[0], qh[128 + 0], scales[0] (192), d (208, 209).
  assert.deepEqual(elementBytes('q6_K', 0), [0, 128, 192, 208, 209]);
  assert.equal(elementBytes('iq2_xxs', 0), null);
});

for (const format of LAYOUT_FORMATS) {
  test(`${format}: every element's filled-in formula evaluates to dequantize's value`, () => {
    const { blockSize, typeSize, quantize } = typeInfo(format);
    const seed = 0xf0 + typeSize;
    const r = rng(seed);
    const nb = 48;
    const sets = [];
    if (quantize) {
      const x = new Float32Array(nb * blockSize);
      for (let i = 0; i < x.length; i++) x[i] = r.normal() * (i % 89 === 0 ? 6 : 0.04) + (i % 512 < 64 ? 0.03 : 0);
      sets.push(quantizeAny(bq, format, x, blockSize));
    }
    const raw = new Uint8Array(nb * typeSize);
    for (let i = 0; i < raw.length; i++) raw[i] = Math.floor(r.next() * 256);
    sets.push(raw);
    let checked = 0;
    for (const bytes of sets) {
      const want = bq.dequantize(format, bytes);
      for (let b = 0; b < nb; b++) {
        const blk = bytes.subarray(b * typeSize, (b + 1) * typeSize);
        const p = decodeBlock(format, blk, grids);
        const parts = { format, bytes: blk, codes: p.codes, sc: p.sc, m: p.m, scalars: p.scalars };
        for (let e = 0; e < blockSize; e++) {
          const w = want[b * blockSize + e];
          const ex = explainElement(parts, e, { steps: e % 7 === 0 });
          const msg = `seed ${seed} block ${b} element ${e}: ${ex.symbolic} = ${ex.filled} = ${ex.result}, want ${w}`;
          assert.ok(same(evalF32(ex.filled), w), msg);
          assert.ok(same(Math.fround(Number(ex.result.replace('\u2212', '-'))), w), msg);
          assert.ok(same(ex.value, w), msg);
          checked++;
        }
      }
    }
    assert.equal(checked, sets.length * nb * blockSize);
  });
}

/** @param {string} fmt @param {Uint8Array} blk */
const parts = (fmt, blk) => {
  const p = decodeBlock(fmt, blk, grids);
  return { format: fmt, bytes: blk, codes: p.codes, sc: p.sc, m: p.m, scalars: p.scalars };
};
const half = (h) => {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    f = h & 1023;
  return e === 0 ? s * f * 2 ** -24 : s * (1024 + f) * 2 ** (e - 25);
};

test('Q4_0 and Q4_1: the nibble, the offset 8 stored nowhere, the explicit m', () => {
  const blk = Uint8Array.from({ length: 18 }, (_, i) => (i < 2 ? [0x4c, 0x22][i] : (i * 37) & 255));
  const ex = explainElement(parts('q4_0', blk), 20); // the high nibble of qs[4]
  const nib = blk[2 + 4] >> 4;
  assert.equal(ex.symbolic, 'x = d · (q − 8)');
  assert.equal(ex.filled, `${fmt32(half(0x224c))} · (${nib} − 8)`);
  assert.ok(ex.steps.some((s) => s.startsWith(`q: qs[4] = 0x${blk[6].toString(16)}, bits 4–7 → ${nib}`)));
  const b1 = Uint8Array.from({ length: 20 }, (_, i) => (i < 4 ? [0x4c, 0x22, 0x00, 0xb8][i] : (i * 29) & 255));
  const e1 = explainElement(parts('q4_1', b1), 3);
  assert.equal(e1.symbolic, 'x = d · q + m');
  assert.equal(e1.filled, `${fmt32(half(0x224c))} · ${b1[4 + 3] & 15} + (\u22120.5)`);
});

test('Q5_0: the code is the nibble | the qh bit << 4 (bit j+16 for the high nibble)', () => {
  const blk = new Uint8Array(22);
  blk[0] = 0x00;
  blk[1] = 0x3c; // d = 1
  blk.set([0x00, 0x00, 0x10, 0x00], 2); // qh bit 20
  blk[6 + 4] = 0xa3; // qs[4]: low nibble 3 (element 4), high nibble 10 (element 20)
  const ex = explainElement(parts('q5_0', blk), 20);
  assert.equal(ex.symbolic, 'x = d · (q − 16)');
  assert.equal(ex.filled, '1 · (26 − 16)');
  assert.equal(ex.result, '10');
  assert.ok(
    ex.steps.some((s) => /qh\[2\] = 0x10, bit 4 \(bit 20 of the u32 qh\) → 1, << 4 → 16/.test(s)),
    ex.steps.join('\n'),
  );
  assert.ok(ex.steps.includes('q = 10 | 16 = 26'));
  assert.equal(explainElement(parts('q5_0', blk), 4).filled, '1 · (3 − 16)');
});

test('K-quants: the sub-block scale and min in the formula', () => {
  const x = new Float32Array(256).map((_, i) => Math.sin(i * 0.7) * 0.1 + 0.02);
  const blk = bq.quantize('q4_K', x);
  const p = parts('q4_K', blk);
  const e = 200,
    j = 6;
  const ex = explainElement(p, e);
  assert.equal(ex.symbolic, 'x = (d · sc_j) · q − dmin · m_j');
  const s = blk.subarray(4, 16);
  const sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4),
    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  const q = (blk[16 + 32 * 3 + (e % 32)] >> 0) & 15; // e = 200: 64-run 3, low nibbles
  const d = half(blk[0] | (blk[1] << 8)),
    dmin = half(blk[2] | (blk[3] << 8));
  assert.equal(ex.filled, `(${fmt32(d)} · ${sc}) · ${q} − ${fmt32(dmin)} · ${m}`);
  assert.ok(ex.steps.includes(`j = ⌊${e}/32⌋ = ${j} (the sub-block)`));
  assert.equal(explainElement(parts('q3_K', bq.quantize('q3_K', x)), 0).symbolic, 'x = (d · (sc_j − 32)) · (q − 4)');
  assert.equal(explainElement(parts('q6_K', bq.quantize('q6_K', x)), 0).symbolic, 'x = (d · sc_j) · (q − 32)');
  assert.equal(explainElement(parts('q2_K', bq.quantize('q2_K', x)), 0).symbolic, 'x = (d · sc_j) · q − dmin · m_j');
});

test('the codebook, E8M0, ternary and grid formats name their lookups', () => {
  const x = new Float32Array(256).map((_, i) => Math.cos(i * 0.3) * 0.2);
  const nl = explainElement(parts('iq4_nl', bq.quantize('iq4_nl', x.subarray(0, 32))), 5);
  assert.equal(nl.symbolic, 'x = d · kvalues_iq4nl[q]');
  assert.ok(nl.steps.some((s) => /^kvalues_iq4nl\[\d+\] = /.test(s)));
  const mx = explainElement(parts('mxfp4', bq.quantize('mxfp4', x.subarray(0, 32))), 5);
  assert.equal(mx.symbolic, 'x = 2^(e − 128) · kvalues_mxfp4[q]');
  assert.ok(
    mx.steps.some((s) => /^e = 0x[0-9a-f]{2} = \d+ → 2\^\(\d+ − 128\)/.test(s)),
    mx.steps.join('\n'),
  );
  assert.equal(explainElement(parts('tq1_0', bq.quantize('tq1_0', x)), 0).symbolic, 'x = d · (q − 1)');
  assert.ok(explainElement(parts('tq1_0', bq.quantize('tq1_0', x)), 0).steps[0].includes('base-3 digit 0'));
  const raw = Uint8Array.from({ length: 66 }, (_, i) => (i * 53 + 7) & 255);
  raw[0] = 0x00;
  raw[1] = 0x1c;
  const g = explainElement(parts('iq2_xxs', raw), 9);
  assert.equal(g.symbolic, 'x = (d · (0.5 + s_j)) · 0.25 · g');
  assert.ok(g.steps.some((s) => s.startsWith('i_1 = grid0[1] = ')));
  const raw1 = Uint8Array.from({ length: 50 }, (_, i) => (i * 71 + 3) & 255);
  raw1[0] = 0x00;
  raw1[1] = 0x1c;
  assert.match(explainElement(parts('iq1_s', raw1), 0).symbolic, /^x = \(d · \(1 \+ 2 · s_j\)\) · \(g [+−] 1\/8\)$/);
});

test('NVFP4, Q1_0 and Q2_0: the UE4M3 sub-block scale, the sign bit, the code minus 1', () => {
  // NVFP4 element 21: sub-block 1 (scale byte d[1]), qs[8 + 5] low nibble.
  const nv = new Uint8Array(36);
  nv.set([0x00, 0x3c, 0x05, 0x7f], 0); // d[1] = 0x3c: e = 7, m = 4 -> 1.5 halved; d[2]: e = 0, m = 5
  nv[4 + 13] = 0x2c; // element 21: code 12 (-4); element 29: code 2
  const ex = explainElement(parts('nvfp4', nv), 21);
  assert.equal(ex.symbolic, 'x = ue4m3(sc_j) · kvalues_mxfp4[q]');
  assert.equal(ex.filled, '0.75 · (\u22124)');
  assert.equal(ex.result, '\u22123');
  assert.ok(
    ex.steps.includes('ue4m3(0x3c): e = 7, m = 4 → (1 + 4/8) · 2^(7 − 7) · 0.5 = 0.75 (halved)'),
    ex.steps.join('\n'),
  );
  assert.deepEqual(elementBytes('nvfp4', 21), [1, 4 + 13]);
  nv[4 + 16] = 0x07; // element 32: sub-block 2, code 7 (12)
  const sub = explainElement(parts('nvfp4', nv), 32);
  assert.equal(sub.filled, `${fmt32(5 * 2 ** -10)} · 12`);
  assert.ok(sub.steps.some((s) => s.startsWith('ue4m3(0x05): e = 0, m = 5 → 5 · 2^−9 · 0.5')));
  assert.equal(explainElement(parts('nvfp4', nv), 48).filled, '0 · 0'); // d[3] = 0x7F reads as 0
  // Q1_0: bit 1 of qs[1] is element 9; set: +d.
  const q1 = new Uint8Array(18);
  q1[1] = 0x3c; // d = 1
  q1[2 + 1] = 0x02;
  assert.equal(explainElement(parts('q1_0', q1), 9).filled, '1 · 1');
  assert.equal(explainElement(parts('q1_0', q1), 8).filled, '1 · (\u22121)');
  assert.equal(explainElement(parts('q1_0', q1), 8).symbolic, 'x = d · q1_0_sign[q]');
  // Q2_0: element 9 is bits 2-3 of qs[2].
  const q2 = new Uint8Array(18);
  q2[1] = 0x3c;
  q2[2 + 2] = 0b1100;
  const e2 = explainElement(parts('q2_0', q2), 9);
  assert.equal(e2.symbolic, 'x = d · (q − 1)');
  assert.equal(e2.filled, '1 · (3 − 1)');
});

test("a quantized tensor's float original: same shape, its name without the type tag", () => {
  const T = (name, type, dims) => ({ name, type, dims });
  const ts = [
    T('blk.0.attn_q.weight', GGMLType.F16, [1024, 96]),
    T('q4_K.blk.0.attn_q.weight', GGMLType.Q4_K, [1024, 96]),
    T('blk.0.ffn_up.weight.q8_0', GGMLType.Q8_0, [1024, 128]),
    T('blk.0.ffn_up.weight', GGMLType.F32, [1024, 128]),
    T('q4_0.blk.0.ffn_up.weight', GGMLType.Q4_0, [1024, 64]), // other shape
    T('q5_0.blk.0.attn_q.weight', GGMLType.Q5_0, [1024, 96]),
    T('q4_0.blk.1.attn_q.weight', GGMLType.Q4_0, [1024, 96]), // no original
    T('Q6_K.blk.0.attn_q.weight', GGMLType.Q6_K, [1024, 96]),
    T('q5_1.blk.0.attn_q.weight', GGMLType.Q4_0, [1024, 96]), // a tag that is not its type
  ];
  assert.equal(originalOf(ts, 'q4_K.blk.0.attn_q.weight'), 'blk.0.attn_q.weight');
  assert.equal(originalOf(ts, 'blk.0.ffn_up.weight.q8_0'), 'blk.0.ffn_up.weight');
  assert.equal(originalOf(ts, 'q4_0.blk.0.ffn_up.weight'), null);
  assert.equal(originalOf(ts, 'q5_0.blk.0.attn_q.weight'), 'blk.0.attn_q.weight');
  assert.equal(originalOf(ts, 'q4_0.blk.1.attn_q.weight'), null);
  assert.equal(originalOf(ts, 'Q6_K.blk.0.attn_q.weight'), 'blk.0.attn_q.weight');
  assert.equal(originalOf(ts, 'q5_1.blk.0.attn_q.weight'), null);
  assert.equal(originalOf(ts, 'blk.0.attn_q.weight'), null);
  assert.equal(originalOf(ts, 'nope'), null);
});
