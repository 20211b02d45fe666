// The block inspector's lessons, as pure functions of a block's bytes and its parts (no DOM, so
// tests/demo-formula.test.js runs them in Node): the byte diagram of a format (its fields in order
// with offsets and sizes, from blockFields), how each element's code is built from its bits, the
// value formula with that element's numbers filled in (evaluated in ggml's float order, so the
// result is the decoder's value), and which float tensor of a file is a quantized tensor's original.

import { blockFields, typeInfo } from '../js/types.js';
import { tensorTypeName } from '../js/gguf.js';
import { LUTS, gridPieces, layoutOf, tritOf, ue4m3Half } from './layout.js';

const MINUS = '\u2212';
const f32 = Math.fround;

/**
 * The shortest decimal that reads back as the same float32 (a minus sign for negatives, −0 kept).
 * @param {number} x
 */
export function fmt32(x) {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : `${MINUS}Infinity`;
  if (Object.is(x, -0)) return `${MINUS}0`;
  const f = f32(x);
  let s = String(f);
  for (let p = 1; p <= 9; p++) {
    const t = f.toPrecision(p);
    if (f32(Number(t)) === f) {
      s = String(Number(t));
      break;
    }
  }
  return s.startsWith('-') ? MINUS + s.slice(1) : s;
}

/** A number as an operand after an operator: negatives (and −0) in parentheses. @param {number} x */
const operand = (x) => {
  const s = fmt32(x);
  return s.startsWith(MINUS) ? `(${s})` : s;
};
/** An integer, with a minus sign. @param {number} v */
const int = (v) => (v < 0 ? `${MINUS}${-v}` : String(v));
/** @param {number} b */
const hex = (b) => `0x${b.toString(16).padStart(2, '0')}`;

/**
 * A format's block as the design chapter draws it: every field in memory order with its byte
 * offset, size and kind, from the format table (blockFields in js/types.js).
 * @param {string} format
 * @returns {{ format: string, size: number, order: string,
 *   fields: { name: string, kind: string, offset: number, size: number, end: number, count: number }[] } | null}
 */
export function byteDiagram(format) {
  const fields = blockFields(format);
  if (!fields) return null;
  const { name, typeSize } = typeInfo(format);
  return {
    format: name,
    size: typeSize,
    order: fields.map((f) => f.name).join(' | '),
    fields: fields.map((f) => ({
      name: f.name,
      kind: f.kind,
      offset: f.offset,
      size: f.size,
      end: f.offset + f.size - 1,
      count: f.size / f.unit,
    })),
  };
}

/**
 * The byte offsets (within the block) that element e's value is read from: its code's bytes, its
 * sub-block's scale and min bytes, and the scalar fields (d, m, dmin, e). null for the grid formats
 * (their index, sign and scale bits are named in the steps instead).
 * @param {string} format
 * @param {number} e
 * @returns {number[] | null} ascending
 */
export function elementBytes(format, e) {
  const c = layoutOf(format);
  if (!c) return null;
  const l = c.layout;
  const j = l.sub ? Math.floor(e / l.sub) : 0;
  const set = new Set(c.code.src[e].map((s) => s.byte));
  for (const k of [c.sc, c.m]) if (k) for (const s of k.src[j]) set.add(s.byte);
  for (const f of blockFields(format) ?? [])
    if ((f.name === l.d && !l.ue4m3) || f.name === l.min) for (let i = 0; i < f.size; i++) set.add(f.offset + i);
  return [...set].sort((a, b) => a - b);
}

/**
 * A block taken apart, as the worker's `block` operation returns it (decodeBlock in layout.js).
 * @typedef {{ format: string, bytes: Uint8Array, codes: ArrayLike<number>, sc: ArrayLike<number> | null,
 *   m: ArrayLike<number> | null, scalars: Record<string, number> }} BlockParts
 * @typedef {{ e: number, j: number, steps: string[], symbolic: string, filled: string, result: string,
 *   value: number }} Explained
 *   symbolic: "x = d · (q − 8)"; filled: the same with the numbers ("0.0123 · (11 − 8)"), grouped as
 *   the decoder rounds (float32, one rounding per operation); result: fmt32(value)
 */

/**
 * How value i of a compiled description (a code, a scale or a min) is assembled from its bits.
 * @param {string} format
 * @param {Uint8Array} b
 * @param {import('./layout.js').Compiled} c
 * @param {number} i
 * @param {string} label
 * @param {string[] | null} steps where the lines go (null: none)
 */
function assemble(format, b, c, i, label, steps) {
  const fields = /** @type {import('../js/types.js').BlockField[]} */ (blockFields(format));
  let raw = 0;
  /** @type {string[]} */
  const pieces = [];
  for (const s of c.src[i]) {
    const f = /** @type {import('../js/types.js').BlockField} */ (fields.find((x) => x.name === s.field));
    const at = s.byte - f.offset,
      B = b[s.byte];
    const v = s.trit < 0 ? (B >> s.shift) & ((1 << s.bits) - 1) : tritOf(B, s.trit);
    raw |= v << s.at;
    pieces.push(String(v << s.at));
    if (!steps) continue;
    let how;
    if (s.trit >= 0) how = `base-3 digit ${s.trit}: ((${B} · 3^${s.trit}) mod 256) · 3 >> 8`;
    else if (s.bits === 8) how = '';
    else {
      how = s.bits === 1 ? `bit ${s.shift}` : `bits ${s.shift}–${s.shift + s.bits - 1}`;
      if (f.unit > 1) {
        const bit = 8 * (at % f.unit) + s.shift;
        const word = f.size > f.unit ? `${f.name}[${Math.floor(at / f.unit)}]` : f.name;
        how += ` (bit${s.bits > 1 ? 's' : ''} ${bit}${s.bits > 1 ? `–${bit + s.bits - 1}` : ''} of the ${f.kind} ${word})`;
      }
    }
    steps.push(
      `${label}: ${s.field}[${at}] = ${hex(B)}${how ? `, ${how}` : ''} → ${v}${s.at ? `, << ${s.at} → ${v << s.at}` : ''}`,
    );
  }
  let v = raw;
  if (c.signed) {
    const sh = 32 - c.width;
    v = (raw << sh) >> sh;
  }
  if (steps) {
    if (pieces.length > 1) steps.push(`${label} = ${pieces.join(' | ')} = ${raw}`);
    if (c.signed && v !== raw) steps.push(`${label} = ${raw} as a signed ${c.width}-bit integer = ${int(v)}`);
  }
  return v; // before the description's offset
}

/** "(q − 8)" or "q". @param {string} name @param {number} offset */
const withOffset = (name, offset) => (offset ? `(${name} ${offset < 0 ? MINUS : '+'} ${Math.abs(offset)})` : name);

/**
 * Element e of a block: its code built up from its bits, its sub-block's scale and min, and the
 * value formula with the numbers filled in. With steps false only the formula (for every row).
 * @param {BlockParts} r
 * @param {number} e
 * @param {{ steps?: boolean }} [opts]
 * @returns {Explained}
 */
export function explainElement(r, e, { steps: withSteps = true } = {}) {
  const steps = withSteps ? /** @type {string[]} */ ([]) : null;
  const g = gridPieces(r.format, r.bytes, e);
  if (g) return explainGrid(r, e, g, steps);
  const c = layoutOf(r.format);
  if (!c) throw new Error(`the demo has no layout description of ${r.format}`);
  const l = c.layout;
  const j = l.sub ? Math.floor(e / l.sub) : 0;
  const D = r.scalars[l.d];
  const rawQ = assemble(r.format, r.bytes, c.code, e, 'q', steps);
  const code = rawQ + l.code.offset;
  if (code !== r.codes[e]) throw new Error(`${r.format} element ${e}: code ${code} is not the decoder's ${r.codes[e]}`);
  if (steps && l.code.offset)
    steps.push(`q ${l.code.offset < 0 ? MINUS : '+'} ${Math.abs(l.code.offset)} = ${int(code)}`);
  const lut = l.lut ? LUTS[/** @type {keyof typeof LUTS} */ (l.lut)] : null;
  const qv = lut ? lut[code] : code;
  if (steps && lut) steps.push(`${l.lut}[${code}] = ${int(qv)}`);
  if (steps && l.e8m0) {
    const byte = r.bytes[blockFields(r.format)?.find((f) => f.name === l.d)?.offset ?? 0];
    steps.push(`${l.d} = ${hex(byte)} = ${byte} → 2^(${byte} − 128) = ${fmt32(D)} (E8M0, halved)`);
  }
  const dName = l.e8m0 ? `2^(${l.d} − 128)` : l.d;
  const qSym = lut ? `${l.lut}[q]` : withOffset('q', l.code.offset);
  const qFill = lut ? operand(qv) : l.code.offset ? withOffset(operand(rawQ), l.code.offset) : operand(code);
  let scaleSym = dName,
    scaleFill = fmt32(D),
    scv = 1;
  if (l.ue4m3 && c.sc) {
    // NVFP4: the sub-block's scale byte is a UE4M3 number, halved; x = scale · code value
    if (steps) steps.push(`j = ⌊${e}/${l.sub}⌋ = ${j} (the sub-block)`);
    const b = assemble(r.format, r.bytes, c.sc, j, `sc_${j}`, steps);
    const ue = ue4m3Half(b),
      ex = (b >> 3) & 15,
      mm = b & 7;
    if (steps)
      steps.push(
        b === 0x7f
          ? `ue4m3(${hex(b)}) = 0 (0x7F is read as 0)`
          : ex === 0
            ? `ue4m3(${hex(b)}): e = 0, m = ${mm} → ${mm} · 2^−9 · 0.5 = ${fmt32(ue)} (halved)`
            : `ue4m3(${hex(b)}): e = ${ex}, m = ${mm} → (1 + ${mm}/8) · 2^(${ex} − 7) · 0.5 = ${fmt32(ue)} (halved)`,
      );
    const value = f32(ue * qv);
    return {
      e,
      j,
      steps: steps ?? [],
      symbolic: `x = ue4m3(sc_j) · ${qSym}`,
      filled: `${fmt32(ue)} · ${qFill}`,
      result: fmt32(value),
      value,
    };
  }
  if (c.sc && l.sc) {
    if (steps) steps.push(`j = ⌊${e}/${l.sub}⌋ = ${j} (the sub-block)`);
    const rawS = assemble(r.format, r.bytes, c.sc, j, `sc_${j}`, steps);
    scv = rawS + l.sc.offset;
    if (r.sc && scv !== r.sc[j]) throw new Error(`${r.format} sub-block ${j}: scale ${scv} is not the decoder's`);
    if (steps && l.sc.offset)
      steps.push(`sc_${j} ${l.sc.offset < 0 ? MINUS : '+'} ${Math.abs(l.sc.offset)} = ${int(scv)}`);
    scaleSym = `(${dName} · ${withOffset('sc_j', l.sc.offset)})`;
    scaleFill = `(${fmt32(D)} · ${l.sc.offset ? withOffset(operand(rawS), l.sc.offset) : operand(scv)})`;
  }
  let value = f32(f32(D * scv) * qv);
  let symbolic = `x = ${scaleSym} · ${qSym}`,
    filled = `${scaleFill} · ${qFill}`;
  if (l.min) {
    const M = r.scalars[l.min];
    const sign = l.minSign < 0 ? MINUS : '+';
    let mv = 1;
    if (c.m) {
      mv = assemble(r.format, r.bytes, c.m, j, `m_${j}`, steps) + (l.m?.offset ?? 0);
      symbolic += ` ${sign} ${l.min} · m_j`;
      filled += ` ${sign} ${operand(M)} · ${operand(mv)}`;
    } else {
      symbolic += ` ${sign} ${l.min}`;
      filled += ` ${sign} ${operand(M)}`;
    }
    value = f32(value + l.minSign * f32(M * mv));
  }
  return { e, j, steps: steps ?? [], symbolic, filled, result: fmt32(value), value };
}

/**
 * explainElement for a grid format (IQ2/IQ3/IQ1).
 * @param {BlockParts} r
 * @param {number} e
 * @param {NonNullable<ReturnType<typeof gridPieces>>} g
 * @param {string[] | null} steps
 * @returns {Explained}
 */
function explainGrid(r, e, g, steps) {
  const D = r.scalars.d,
    code = r.codes[e],
    s = g.scale.v,
    [a, bb, cc] = g.db;
  const inner = bb === 1 ? `${a} + s_j` : `${a} + ${bb} · s_j`;
  const innerFill = bb === 1 ? `${a} + ${s}` : `${a} + ${bb} · ${s}`;
  const dbSym = `(d · (${inner}))${cc === 1 ? '' : ` · ${cc}`}`;
  const dbFill = `(${fmt32(D)} · (${innerFill}))${cc === 1 ? '' : ` · ${cc}`}`;
  const db = f32(f32(D * (a + bb * s)) * cc);
  if (steps) {
    steps.push(`i_${g.k} = ${g.index.where} = ${g.index.v} (grid row)`);
    const entry = g.sign ? Math.abs(code) : code;
    steps.push(`${g.table}[${g.index.v}][${g.col}] = ${int(entry)}`);
    if (g.sign)
      steps.push(
        `sign: bit ${g.sign.bit} of ${g.sign.where} = ${hex(g.sign.byte)} is ${g.sign.set} → g = ${int(code)}`,
      );
    if (g.delta) steps.push(`δ: ${g.delta.where} = ${g.delta.set} → ${g.delta.set ? MINUS : '+'}1/8`);
    steps.push(`j = ⌊${e}/${g.sub}⌋ = ${g.j}; s_j = ${g.scale.where} = ${s}`);
    steps.push(`db_j = ${dbSym} = ${dbFill} = ${fmt32(db)}`);
  }
  let value, symbolic, filled;
  if (g.delta) {
    const dv = g.delta.set ? -0.125 : 0.125;
    value = f32(db * f32(code + dv));
    symbolic = `x = ${dbSym} · (g ${g.delta.set ? MINUS : '+'} 1/8)`;
    filled = `${dbFill} · (${int(code)} ${g.delta.set ? MINUS : '+'} 0.125)`;
  } else {
    value = f32(db * code);
    symbolic = `x = ${dbSym} · g`;
    filled = `${dbFill} · ${code < 0 ? `(${int(code)})` : code}`;
  }
  return { e, j: g.j, steps: steps ?? [], symbolic, filled, result: fmt32(value), value };
}

/**
 * The float original of a quantized tensor, when the file holds one: a float (F32/F16/BF16)
 * tensor of the same shape whose name is the quantized tensor's with its type name as a leading or
 * trailing dotted part removed ("q4_K.blk.0.attn_q.weight" or "blk.0.attn_q.weight.q4_K" ->
 * "blk.0.attn_q.weight"), compared without case.
 * @param {{ name: string, type: number, dims: number[], byteLength?: number | null, layout?: string }[]} tensors
 * @param {string} name the quantized tensor
 * @returns {string | null}
 */
export function originalOf(tensors, name) {
  const t = tensors.find((x) => x.name === name);
  if (!t) return null;
  const tag = tensorTypeName(t).toLowerCase();
  const low = name.toLowerCase();
  /** @type {string[]} */
  const stems = [];
  if (low.startsWith(`${tag}.`)) stems.push(low.slice(tag.length + 1));
  if (low.endsWith(`.${tag}`)) stems.push(low.slice(0, -tag.length - 1));
  const FLOAT = new Set(['f32', 'f16', 'bf16']);
  const same = (/** @type {number[]} */ a) => a.length === t.dims.length && a.every((v, i) => v === t.dims[i]);
  const hit = tensors.find(
    (x) =>
      x !== t && FLOAT.has(tensorTypeName(x).toLowerCase()) && stems.includes(x.name.toLowerCase()) && same(x.dims),
  );
  return hit ? hit.name : null;
}
