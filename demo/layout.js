// How each block format stores its values, described once as data: which bits of which field
// (fields and offsets from blockFields in js/types.js) make an element's code and a sub-block's
// scale and min, and how they combine into the value. The demo's decoders, code histograms and the
// inspector's formulas and element texts are all generated from these descriptions, and
// tests/demo-layout.test.js checks the decoder against the codec's dequantize for every format.

import { blockFields, typeInfo } from '../js/types.js';

/**
 * One source of bits. A 'plane' part packs a field's values bits at a time, group elements per
 * run: value i is in byte G*floor(i/(G*P)) + i%G (P = 8/bits values per byte), at bit
 * bits*floor((i%(G*P))/G); so ggml's split nibbles (Q4_0: G=16), K-quant nibbles (G=32), 2-bit and
 * 1-bit planes and plain bytes (bits=8) are one rule. A 'lin' part is byte i+add at a fixed shift
 * (Q2_K and the packed 6-bit scales of Q4_K/Q5_K). `at`: where the bits go in the result; `from`:
 * the part's first byte inside the field.
 * @typedef {{ kind: 'plane' | 'lin', field: string, bits: number, group: number, add: number,
 *   shift: number, at: number, from: number }} Part
 * @typedef {{ upTo: number, parts: Part[] }} Case  the parts for indices below upTo
 * @typedef {{ cases: Case[], signed: boolean, offset: number }} Values
 *   the decoded integer: (signed ? as int of its bit width : unsigned) + offset
 * @typedef {{ code: Values, sub: number, sc: Values | null, m: Values | null, d: string,
 *   min: string | null, minSign: number }} Layout
 *   x = (d * sc_j) * q + minSign * (min * m_j), q = code; sc_j = 1 and m_j = 1 without sub-blocks
 */

/** @returns {Part} */
const plane = (field, bits, group, { at = 0, from = 0 } = {}) => ({
  kind: 'plane',
  field,
  bits,
  group,
  add: 0,
  shift: 0,
  at,
  from,
});
/** @returns {Part} */
const lin = (field, add, shift, bits, at = 0) => ({ kind: 'lin', field, bits, group: 1, add, shift, at, from: 0 });
/** @returns {Values} */
const vals = (parts, offset = 0, signed = false, upTo = Infinity) => ({
  cases: [{ upTo, parts }],
  signed,
  offset,
});

// Q4_K/Q5_K's 12 scale bytes (ggml's get_scale_min_k4): sub-blocks 0-3 in the low 6 bits of bytes
// 0-3 (scales) and 4-7 (mins); 4-7 split into a low nibble in bytes 8-11 and the top 2 bits of
// bytes 0-3 (scales) or 4-7 (mins).
const K4_SC = {
  cases: [
    { upTo: 4, parts: [lin('scales', 0, 0, 6)] },
    { upTo: 8, parts: [lin('scales', 4, 0, 4), lin('scales', -4, 6, 2, 4)] },
  ],
  signed: false,
  offset: 0,
};
const K4_M = {
  cases: [
    { upTo: 4, parts: [lin('scales', 4, 0, 6)] },
    { upTo: 8, parts: [lin('scales', 4, 4, 4), lin('scales', 0, 6, 2, 4)] },
  ],
  signed: false,
  offset: 0,
};

/** @type {Record<string, Layout>} */
const LAYOUT = {
  q4_0: { code: vals([plane('qs', 4, 16)], -8), sub: 0, sc: null, m: null, d: 'd', min: null, minSign: 0 },
  q4_1: { code: vals([plane('qs', 4, 16)]), sub: 0, sc: null, m: null, d: 'd', min: 'm', minSign: 1 },
  q5_0: {
    code: vals([plane('qs', 4, 16), plane('qh', 1, 1, { at: 4 })], -16),
    sub: 0,
    sc: null,
    m: null,
    d: 'd',
    min: null,
    minSign: 0,
  },
  q5_1: {
    code: vals([plane('qs', 4, 16), plane('qh', 1, 1, { at: 4 })]),
    sub: 0,
    sc: null,
    m: null,
    d: 'd',
    min: 'm',
    minSign: 1,
  },
  q8_0: { code: vals([plane('qs', 8, 1)], 0, true), sub: 0, sc: null, m: null, d: 'd', min: null, minSign: 0 },
  q8_1: { code: vals([plane('qs', 8, 1)], 0, true), sub: 0, sc: null, m: null, d: 'd', min: null, minSign: 0 },
  q2_K: {
    code: vals([plane('qs', 2, 32)]),
    sub: 16,
    sc: vals([lin('scales', 0, 0, 4)]),
    m: vals([lin('scales', 0, 4, 4)]),
    d: 'd',
    min: 'dmin',
    minSign: -1,
  },
  q3_K: {
    code: vals([plane('qs', 2, 32), plane('hmask', 1, 32, { at: 2 })], -4),
    sub: 16,
    sc: vals([plane('scales', 4, 8), plane('scales', 2, 4, { at: 4, from: 8 })], -32),
    m: null,
    d: 'd',
    min: null,
    minSign: 0,
  },
  q4_K: { code: vals([plane('qs', 4, 32)]), sub: 32, sc: K4_SC, m: K4_M, d: 'd', min: 'dmin', minSign: -1 },
  q5_K: {
    code: vals([plane('qs', 4, 32), plane('qh', 1, 32, { at: 4 })]),
    sub: 32,
    sc: K4_SC,
    m: K4_M,
    d: 'd',
    min: 'dmin',
    minSign: -1,
  },
  q6_K: {
    code: vals([plane('ql', 4, 64), plane('qh', 2, 32, { at: 4 })], -32),
    sub: 16,
    sc: vals([lin('scales', 0, 0, 8)], 0, true),
    m: null,
    d: 'd',
    min: null,
    minSign: 0,
  },
  q8_K: { code: vals([plane('qs', 8, 1)], 0, true), sub: 0, sc: null, m: null, d: 'd', min: null, minSign: 0 },
};

/** The formats with a layout description: the block formats the demo can take apart. */
export const LAYOUT_FORMATS = Object.freeze(Object.keys(LAYOUT));

/**
 * Byte (within the field) and shift of value i of a part.
 * @param {Part} p
 * @param {number} i
 */
function locate(p, i) {
  if (p.kind === 'lin') return { byte: i + p.add, shift: p.shift };
  const per = 8 / p.bits,
    g = p.group;
  return { byte: p.from + g * Math.floor(i / (g * per)) + (i % g), shift: p.bits * Math.floor((i % (g * per)) / g) };
}

/**
 * A compiled decoder for one Values description over n indices: for each index, each part's
 * absolute byte offset in the block, shift, mask and position.
 * @typedef {{ n: number, width: number, signed: boolean, offset: number,
 *   src: { field: string, byte: number, shift: number, bits: number, at: number }[][] }} Compiled
 * @param {string} format
 * @param {Values} v
 * @param {number} n
 * @returns {Compiled}
 */
function compile(format, v, n) {
  const fields = /** @type {import('../js/types.js').BlockField[]} */ (blockFields(format));
  const width = Math.max(...v.cases.flatMap((c) => c.parts.map((p) => p.at + p.bits)));
  const src = [];
  for (let i = 0; i < n; i++) {
    const c = v.cases.find((k) => i < k.upTo);
    if (!c) throw new Error(`${format}: no layout case for index ${i}`);
    src.push(
      c.parts.map((p) => {
        const f = fields.find((x) => x.name === p.field);
        const { byte, shift } = locate(p, i);
        if (!f || byte < 0 || byte >= f.size || shift + p.bits > 8)
          throw new Error(`${format}: layout part ${p.field}[${byte}] >> ${shift} lies outside the block's fields`);
        return { field: p.field, byte: f.offset + byte, shift, bits: p.bits, at: p.at };
      }),
    );
  }
  return { n, width, signed: v.signed, offset: v.offset, src };
}

/** @type {Map<string, { code: Compiled, sc: Compiled | null, m: Compiled | null, layout: Layout }>} */
const COMPILED = new Map();

/**
 * The compiled layout of a format, or null when it has none.
 * @param {string} format a type name ('q4_K')
 */
export function layoutOf(format) {
  const name = typeInfo(format).name;
  if (!(name in LAYOUT)) return null;
  let c = COMPILED.get(name);
  if (!c) {
    const l = LAYOUT[name],
      { blockSize } = typeInfo(name);
    const ns = l.sub ? blockSize / l.sub : 0;
    c = {
      layout: l,
      code: compile(name, l.code, blockSize),
      sc: l.sc && compile(name, l.sc, ns),
      m: l.m && compile(name, l.m, ns),
    };
    COMPILED.set(name, c);
  }
  return c;
}

/**
 * Decodes every index of a compiled description from the block at byte o of b into out.
 * @param {Compiled} c
 * @param {Uint8Array} b
 * @param {number} o
 * @param {Int32Array | number[]} out
 */
export function decodeInts(c, b, o = 0, out = new Int32Array(c.n)) {
  const sign = c.signed ? 32 - c.width : 0;
  for (let i = 0; i < c.n; i++) {
    let v = 0;
    for (const s of c.src[i]) v |= ((b[o + s.byte] >> s.shift) & ((1 << s.bits) - 1)) << s.at;
    out[i] = (sign ? (v << sign) >> sign : v) + c.offset;
  }
  return out;
}

/** The value of binary16 bits (NaN for any NaN). @param {number} h */
export function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    f = h & 1023;
  return e === 31 ? (f ? NaN : s * Infinity) : e === 0 ? s * f * 2 ** -24 : s * (1024 + f) * 2 ** (e - 25);
}

/**
 * The scalar (count 1, float) fields of a block: name -> value, read from the block at byte o.
 * @param {string} format
 * @param {Uint8Array} b
 * @param {number} o
 * @returns {Record<string, number>}
 */
export function scalarFields(format, b, o = 0) {
  /** @type {Record<string, number>} */
  const r = {};
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (const f of blockFields(format) ?? []) {
    if (f.kind === 'f16' && f.size === 2) r[f.name] = halfToFloat(dv.getUint16(o + f.offset, true));
    if (f.kind === 'f32' && f.size === 4) r[f.name] = dv.getFloat32(o + f.offset, true);
  }
  return r;
}

/**
 * A block taken apart: its scalar fields, its sub-blocks' integer scales and mins, every
 * element's code, sub-block and where its bits are, and its value recomputed from the fields in
 * ggml's float order (f32, one rounding per operation).
 * @param {string} format
 * @param {Uint8Array} b one block's bytes
 */
export function decodeBlock(format, b) {
  const c = layoutOf(format);
  if (!c) throw new Error(`the demo has no layout description of ${format}`);
  const l = c.layout;
  const scalars = scalarFields(format, b);
  const codes = decodeInts(c.code, b);
  const sc = c.sc ? decodeInts(c.sc, b) : null;
  const m = c.m ? decodeInts(c.m, b) : null;
  const f = Math.fround;
  const D = scalars[l.d],
    M = l.min ? scalars[l.min] : 0;
  const values = new Float32Array(codes.length);
  for (let e = 0; e < codes.length; e++) {
    const j = l.sub ? Math.floor(e / l.sub) : 0;
    const x = f(f(D * (sc ? sc[j] : 1)) * codes[e]);
    values[e] = l.min ? f(x + l.minSign * f(M * (m ? m[j] : 1))) : x;
  }
  const where = (/** @type {Compiled} */ k, /** @type {number} */ i) =>
    k.src[i].map((s) => `${s.field}[${s.byte - fieldOffset(format, s.field)}]${bitRange(s.shift, s.bits)}`).join(' ');
  return {
    scalars,
    codes,
    sc,
    m,
    values,
    sub: l.sub,
    where: (/** @type {number} */ e) => where(c.code, e),
    scWhere: (/** @type {number} */ j) => (c.sc ? where(c.sc, j) : ''),
    mWhere: (/** @type {number} */ j) => (c.m ? where(c.m, j) : ''),
  };
}

/** @param {string} format @param {string} field */
const fieldOffset = (format, field) => blockFields(format)?.find((f) => f.name === field)?.offset ?? 0;
/** @param {number} shift @param {number} bits */
const bitRange = (shift, bits) => (bits === 8 ? '' : bits === 1 ? `.${shift}` : `.${shift}-${shift + bits - 1}`);

// ---- text, generated from the same descriptions ----

/**
 * The expression for one part's value at index variable v, e.g. "qs[32·⌊e/64⌋ + e mod 32] >>
 * 4·⌊(e mod 64)/32⌋ & 15".
 * @param {Part} p
 * @param {string} v
 * @param {number} n how many indices the description covers (terms that are constant over them vanish)
 */
function partText(p, v, n) {
  const mask = (1 << p.bits) - 1;
  let byte, shift;
  if (p.kind === 'lin') {
    byte = p.add ? `${v} ${p.add > 0 ? '+' : '-'} ${Math.abs(p.add)}` : v;
    shift = String(p.shift);
  } else {
    const per = 8 / p.bits,
      g = p.group,
      run = g * per;
    const terms = [];
    if (p.from) terms.push(String(p.from));
    if (run < n) terms.push(run === 1 ? v : g === 1 ? `⌊${v}/${run}⌋` : `${g}·⌊${v}/${run}⌋`);
    if (g > 1) terms.push(g >= n ? v : `${v} mod ${g}`);
    byte = terms.join(' + ') || '0';
    const inRun = run >= n ? v : `(${v} mod ${run})`;
    shift = per === 1 ? '0' : g === 1 ? inRun : `${p.bits === 1 ? '' : `${p.bits}·`}⌊${inRun}/${g}⌋`;
  }
  const shifted = shift === '0' ? `${p.field}[${byte}]` : `(${p.field}[${byte}] >> ${shift})`;
  const body = p.bits === 8 ? shifted : `${shifted} & ${mask}`;
  return p.at ? `(${body}) << ${p.at}` : body;
}

/**
 * The formula of a Values description, e.g. "(qs[…] & 15) | (…) << 4, minus 16".
 * @param {Values} d
 * @param {string} v
 * @param {number} n
 */
function valuesText(d, v, n) {
  const cases = d.cases.filter((c, i) => i === 0 || d.cases[i - 1].upTo < n);
  const one = (/** @type {Case} */ c) => c.parts.map((p) => partText(p, v, n)).join(' | ');
  let s =
    cases.length === 1
      ? one(cases[0])
      : cases.map((c, i) => `${one(c)} for ${i ? `${cases[i - 1].upTo} ≤ ` : ''}${v} < ${c.upTo}`).join('; ');
  if (d.signed) s += ' (as a signed integer)';
  if (d.offset) s += `, ${d.offset < 0 ? 'minus' : 'plus'} ${Math.abs(d.offset)}`;
  return s;
}

/**
 * The inspector's text for a format: the value formula and how each element's code (and each
 * sub-block's scale and min) is read from the block's bytes.
 * @param {string} format
 * @returns {string[]} lines
 */
export function layoutText(format) {
  const c = layoutOf(format);
  if (!c) return [];
  const l = c.layout,
    { blockSize } = typeInfo(format);
  const ns = l.sub ? blockSize / l.sub : 0;
  const scale = l.sc ? `(${l.d} · sc_j)` : l.d;
  const min = l.min ? ` ${l.minSign < 0 ? '−' : '+'} ${l.m ? `${l.min} · m_j` : l.min}` : '';
  const lines = [`x_e = ${scale} · q_e${min}${l.sub ? `,  j = ⌊e/${l.sub}⌋ (the sub-block)` : ''}`];
  lines.push(`q_e = ${valuesText(l.code, 'e', blockSize)}   (e = 0…${blockSize - 1})`);
  if (l.sc) lines.push(`sc_j = ${valuesText(l.sc, 'j', ns)}   (j = 0…${ns - 1})`);
  if (l.m) lines.push(`m_j = ${valuesText(l.m, 'j', ns)}`);
  return lines;
}
