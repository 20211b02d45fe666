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
 * the part's first byte inside the field. A 'trit' part (TQ1_0) is base-3 digit n of a byte: for
 * i' = i - add, byte from + i' mod group, n = floor(i'/group), digit ((byte * 3^n) mod 256) * 3 >> 8.
 * @typedef {{ kind: 'plane' | 'lin' | 'trit', field: string, bits: number, group: number, add: number,
 *   shift: number, at: number, from: number }} Part
 * @typedef {{ upTo: number, parts: Part[] }} Case  the parts for indices below upTo
 * @typedef {{ cases: Case[], signed: boolean, offset: number }} Values
 *   the decoded integer: (signed ? as int of its bit width : unsigned) + offset
 * @typedef {{ code: Values, sub: number, sc: Values | null, m: Values | null, d: string,
 *   min: string | null, minSign: number, lut?: string, e8m0?: boolean, ue4m3?: boolean }} Layout
 *   x = (d * sc_j) * q + minSign * (min * m_j), q = code, or q = LUTS[lut][code] with a lut (the
 *   non-linear IQ4 and FP4 codebooks, Q1_0's signs); sc_j = 1 and m_j = 1 without sub-blocks;
 *   e8m0: field d is one byte e meaning 2^(e-128) (MXFP4's E8M0 scale, halved because its codebook
 *   holds 2 x E2M1); ue4m3: there is no d, sc_j is a UE4M3 byte and x = ue4m3(sc_j) * q
 *   (NVFP4's per-sub-block scales, halved for the same codebook: ue4m3Half)
 */

/** The codebooks: code -> integer multiplier. ggml's non-linear kvalues_iq4nl and kvalues_mxfp4
 * (twice the E2M1 values, shared by MXFP4 and NVFP4), and Q1_0's sign bit (set: +d, clear: -d). */
export const LUTS = Object.freeze({
  kvalues_iq4nl: Object.freeze([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]),
  kvalues_mxfp4: Object.freeze([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12]),
  q1_0_sign: Object.freeze([-1, 1]),
});

/**
 * The value of an NVFP4 scale byte, as ggml's ggml_ue4m3_to_fp32 gives it: UE4M3 (4 exponent
 * bits, bias 7, 3 mantissa bits; bit 7 ignored) halved, to pair with the doubled E2M1 codebook.
 * 0x00 and 0x7F are 0 (0xFF is not: it reads as 240); exponent 0 is m · 2^-9, halved.
 * @param {number} b a byte
 */
export function ue4m3Half(b) {
  if (b === 0 || b === 0x7f) return 0;
  const e = (b >> 3) & 15,
    m = b & 7;
  return (e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7)) * 0.5;
}

/** @param {string} field @param {number} bits @param {number} group @param {{ at?: number, from?: number }} [o] @returns {Part} */
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
/** @param {string} field @param {number} add @param {number} shift @param {number} bits @returns {Part} */
const lin = (field, add, shift, bits, at = 0) => ({ kind: 'lin', field, bits, group: 1, add, shift, at, from: 0 });
/** @param {string} field @param {number} group @param {number} from @param {number} base @returns {Part} */
const trit = (field, group, from, base) => ({ kind: 'trit', field, bits: 2, group, add: base, shift: 0, at: 0, from });
/** @param {Part[]} parts @returns {Values} */
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
  iq4_nl: {
    code: vals([plane('qs', 4, 16)]),
    sub: 0,
    sc: null,
    m: null,
    d: 'd',
    min: null,
    minSign: 0,
    lut: 'kvalues_iq4nl',
  },
  // ls_j = (scales_l nibble j) | (2 bits j of the u16 scales_h) << 4, minus 32
  iq4_xs: {
    code: vals([plane('qs', 4, 16)]),
    sub: 32,
    sc: vals([plane('scales_l', 4, 1), plane('scales_h', 2, 1, { at: 4 })], -32),
    m: null,
    d: 'd',
    min: null,
    minSign: 0,
    lut: 'kvalues_iq4nl',
  },
  mxfp4: {
    code: vals([plane('qs', 4, 16)]),
    sub: 0,
    sc: null,
    m: null,
    d: 'e',
    min: null,
    minSign: 0,
    lut: 'kvalues_mxfp4',
    e8m0: true,
  },
  // Trits: 5 per qs byte for the first 240 elements (32 bytes x 5, then 16 bytes x 5), 4 per qh byte.
  tq1_0: {
    code: {
      cases: [
        { upTo: 160, parts: [trit('qs', 32, 0, 0)] },
        { upTo: 240, parts: [trit('qs', 16, 32, 160)] },
        { upTo: 256, parts: [trit('qh', 4, 0, 240)] },
      ],
      signed: false,
      offset: -1,
    },
    sub: 0,
    sc: null,
    m: null,
    d: 'd',
    min: null,
    minSign: 0,
  },
  tq2_0: { code: vals([plane('qs', 2, 32)], -1), sub: 0, sc: null, m: null, d: 'd', min: null, minSign: 0 },
  // Sub-block s (16 elements) under its UE4M3 byte d[s], codes in qs[8s .. 8s+7]: element j < 8 in
  // the low nibble of qs[8s + j], j + 8 in its high nibble.
  nvfp4: {
    code: vals([plane('qs', 4, 8)]),
    sub: 16,
    sc: vals([plane('d', 8, 1)]),
    m: null,
    d: 'd',
    min: null,
    minSign: 0,
    lut: 'kvalues_mxfp4',
    ue4m3: true,
  },
  // One sign bit per element, bit j % 8 of qs[j / 8]: x = +d where set, -d where clear.
  q1_0: { code: vals([plane('qs', 1, 1)]), sub: 0, sc: null, m: null, d: 'd', min: null, minSign: 0, lut: 'q1_0_sign' },
  // Four 2-bit codes per byte, element j at bits 2 (j % 4) of qs[j / 4]: x = d · (q - 1).
  q2_0: { code: vals([plane('qs', 2, 1)], -1), sub: 0, sc: null, m: null, d: 'd', min: null, minSign: 0 },
};

// ---- the grid formats (IQ2_XXS ... IQ1_M) ----
// Their elements come 8 (IQ3: 4) at a time from a row of a grid table, chosen by an index of 8 to
// 11 bits assembled from several fields, with 8 sign bits per 8 elements (IQ1: signed grid bytes and
// a ±1/8 shift instead) and a small integer scale s per sub-block: db = (D * (a + b*s)) * c, then
// x = ±(db * grid byte) or x = db * (grid byte + delta). Each accessor returns the integer and the
// fields it was read from; ggml's float order is in decodeBlock.

/** @param {Uint8Array} b @param {number} o */
const u16 = (b, o) => b[o] | (b[o + 1] << 8);
/** @param {Uint8Array} b @param {number} o */
const u32 = (b, o) => (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;
/** ksigns_iq2xs: a 7-bit index and its parity as bit 7 (an even number of negatives). @param {number} i */
const ksigns = (i) => {
  let p = 0;
  for (let v = i; v; v >>= 1) p ^= v & 1;
  return i | (p << 7);
};
/** @param {number} lo @param {number} n */
const bitsText = (lo, n) => (n === 1 ? `bit ${lo}` : `bits ${lo}…${lo + n - 1}`);

/**
 * @typedef {{ v: number, where: string }} Read
 * @typedef {{ table: string, width: number, sub: number, db: [number, number, number],
 *   range: [number, number], dBits?: (b: Uint8Array, o: number) => number,
 *   index: (b: Uint8Array, o: number, k: number) => Read, sign: ((b: Uint8Array, o: number, g: number) => Read) | null,
 *   delta: ((b: Uint8Array, o: number, g: number) => Read) | null, scale: (b: Uint8Array, o: number, j: number) => Read,
 *   text: string[] }} GridLayout
 *   index k: entry of grid row k (elements width*k ...); sign and delta g: 8 elements 8g ...;
 *   scale j: sub elements sub*j ...; range: the smallest and largest signed grid value q_e
 */

/** IQ2_XS and IQ2_S: a 4-bit scale per 16 elements, two per byte of `scales` at byte at. @param {number} at */
const nibbleScale = (at) => (/** @type {Uint8Array} */ b, /** @type {number} */ o, /** @type {number} */ j) => ({
  v: (b[o + at + (j >> 1)] >> (4 * (j & 1))) & 15,
  where: `scales[${j >> 1}].${j & 1 ? '4-7' : '0-3'}`,
});
const IQ2_DB = /** @type {[number, number, number]} */ ([0.5, 1, 0.25]);
const DB_TEXT = (/** @type {string} */ t) =>
  `x_e = ±(db_j · ${t}[i_k][e mod 8]), sign bit e mod 8 of s_g;  db_j = (d · (0.5 + s_j)) · 0.25`;

/** @type {Record<string, GridLayout>} */
const GRID = {
  iq2_xxs: {
    table: 'iq2xxs_grid',
    width: 8,
    sub: 32,
    db: IQ2_DB,
    range: [-43, 43],
    index: (b, o, k) => ({ v: b[o + 2 + 8 * (k >> 2) + (k & 3)], where: `grid${k >> 2}[${k & 3}]` }),
    sign: (b, o, g) => {
      const i = (u32(b, o + 6 + 8 * (g >> 2)) >>> (7 * (g & 3))) & 127;
      return { v: ksigns(i), where: `ksigns[sas${g >> 2} ${bitsText(7 * (g & 3), 7)} = ${i}]` };
    },
    delta: null,
    scale: (b, o, j) => ({ v: u32(b, o + 6 + 8 * j) >>> 28, where: `sas${j} bits 28…31` }),
    text: [
      DB_TEXT('iq2xxs_grid'),
      'k = g = ⌊e/8⌋, j = ⌊e/32⌋;  i_k = grid{j}[k mod 4];  s_g = ksigns[(sas{j} >> 7·(g mod 4)) & 127];  s_j = sas{j} >> 28',
    ],
  },
  iq2_xs: {
    table: 'iq2xs_grid',
    width: 8,
    sub: 16,
    db: IQ2_DB,
    range: [-43, 43],
    index: (b, o, k) => ({ v: u16(b, o + 2 + 2 * k) & 511, where: `qs[${k}] bits 0…8` }),
    sign: (b, o, g) => {
      const i = u16(b, o + 2 + 2 * g) >> 9;
      return { v: ksigns(i), where: `ksigns[qs[${g}] bits 9…15 = ${i}]` };
    },
    delta: null,
    scale: nibbleScale(66),
    text: [
      DB_TEXT('iq2xs_grid'),
      'k = g = ⌊e/8⌋, j = ⌊e/16⌋;  i_k = qs[k] & 511;  s_g = ksigns[qs[g] >> 9];  s_j = (scales[⌊j/2⌋] >> 4·(j mod 2)) & 15',
    ],
  },
  iq2_s: {
    table: 'iq2s_grid',
    width: 8,
    sub: 16,
    db: IQ2_DB,
    range: [-43, 43],
    index: (b, o, k) => {
      const s = 2 * (k & 3);
      return {
        v: b[o + 2 + k] | (((b[o + 66 + (k >> 2)] >> s) & 3) << 8),
        where: `qs[${k}] | qh[${k >> 2}].${s}-${s + 1} << 8`,
      };
    },
    sign: (b, o, g) => ({ v: b[o + 34 + g], where: `signs[${g}]` }),
    delta: null,
    scale: nibbleScale(74),
    text: [
      DB_TEXT('iq2s_grid'),
      'k = g = ⌊e/8⌋, j = ⌊e/16⌋;  i_k = qs[k] | ((qh[⌊k/4⌋] >> 2·(k mod 4)) & 3) << 8;  s_g = signs[g];  s_j = (scales[⌊j/2⌋] >> 4·(j mod 2)) & 15',
    ],
  },
  iq3_xxs: {
    table: 'iq3xxs_grid',
    width: 4,
    sub: 32,
    db: [0.5, 1, 0.5],
    range: [-62, 62],
    index: (b, o, k) => ({ v: b[o + 2 + k], where: `qs[${k}]` }),
    sign: (b, o, g) => {
      const i = (u32(b, o + 66 + 4 * (g >> 2)) >>> (7 * (g & 3))) & 127;
      return { v: ksigns(i), where: `ksigns[sas[${g >> 2}] ${bitsText(7 * (g & 3), 7)} = ${i}]` };
    },
    delta: null,
    scale: (b, o, j) => ({ v: u32(b, o + 66 + 4 * j) >>> 28, where: `sas[${j}] bits 28…31` }),
    text: [
      'x_e = ±(db_j · iq3xxs_grid[i_k][e mod 4]), sign bit e mod 8 of s_g;  db_j = (d · (0.5 + s_j)) · 0.5',
      'k = ⌊e/4⌋, g = ⌊e/8⌋, j = ⌊e/32⌋;  i_k = qs[k];  s_g = ksigns[(sas[j] >> 7·(g mod 4)) & 127];  s_j = sas[j] >> 28',
    ],
  },
  iq3_s: {
    table: 'iq3s_grid',
    width: 4,
    sub: 32,
    db: [1, 2, 1],
    range: [-15, 15],
    index: (b, o, k) => ({
      v: b[o + 2 + k] | (((b[o + 66 + (k >> 3)] >> (k & 7)) & 1) << 8),
      where: `qs[${k}] | qh[${k >> 3}].${k & 7} << 8`,
    }),
    sign: (b, o, g) => ({ v: b[o + 74 + g], where: `signs[${g}]` }),
    delta: null,
    scale: (b, o, j) => ({
      v: (b[o + 106 + (j >> 1)] >> (4 * (j & 1))) & 15,
      where: `scales[${j >> 1}].${j & 1 ? '4-7' : '0-3'}`,
    }),
    text: [
      'x_e = ±(db_j · iq3s_grid[i_k][e mod 4]), sign bit e mod 8 of s_g;  db_j = d · (1 + 2·s_j)',
      'k = ⌊e/4⌋, g = ⌊e/8⌋, j = ⌊e/32⌋;  i_k = qs[k] | ((qh[⌊k/8⌋] >> (k mod 8)) & 1) << 8;  s_g = signs[g];  s_j = (scales[⌊j/2⌋] >> 4·(j mod 2)) & 15',
    ],
  },
  iq1_s: {
    table: 'iq1s_grid',
    width: 8,
    sub: 32,
    db: [1, 2, 1],
    range: [-1, 1],
    index: (b, o, k) => {
      const h = u16(b, o + 34 + 2 * (k >> 2)),
        s = 3 * (k & 3);
      return { v: b[o + 2 + k] | (((h >> s) & 7) << 8), where: `qs[${k}] | qh[${k >> 2}] ${bitsText(s, 3)} << 8` };
    },
    sign: null,
    delta: (b, o, g) => ({ v: u16(b, o + 34 + 2 * (g >> 2)) >> 15, where: `qh[${g >> 2}] bit 15` }),
    scale: (b, o, j) => ({ v: (u16(b, o + 34 + 2 * j) >> 12) & 7, where: `qh[${j}] bits 12…14` }),
    text: [
      'x_e = db_j · (iq1s_grid[i_k][e mod 8] + δ_g), δ_g = −1/8 if its bit is set else +1/8;  db_j = d · (2·s_j + 1)',
      'k = g = ⌊e/8⌋, j = ⌊e/32⌋;  i_k = qs[k] | ((qh[j] >> 3·(k mod 4)) & 7) << 8;  δ bit = qh[j] bit 15;  s_j = (qh[j] >> 12) & 7',
    ],
  },
  iq1_m: {
    table: 'iq1s_grid',
    width: 8,
    sub: 16,
    db: [1, 2, 1],
    range: [-1, 1],
    dBits: (b, o) => {
      const w = (/** @type {number} */ i) => u16(b, o + 48 + 2 * i);
      return (w(0) >> 12) | ((w(1) >> 8) & 0xf0) | ((w(2) >> 4) & 0xf00) | (w(3) & 0xf000);
    },
    index: (b, o, k) => {
      const q = 32 + 2 * (k >> 2) + ((k & 3) >> 1),
        s = 4 * (k & 1);
      return { v: b[o + k] | (((b[o + q] >> s) & 7) << 8), where: `qs[${k}] | qh[${q - 32}].${s}-${s + 2} << 8` };
    },
    sign: null,
    delta: (b, o, g) => {
      const q = 32 + 2 * (g >> 2) + ((g & 3) >> 1),
        s = 4 * (g & 1) + 3;
      return { v: (b[o + q] >> s) & 1, where: `qh[${q - 32}].${s}` };
    },
    scale: (b, o, j) => {
      const ib = j >> 1,
        s = 6 * (ib & 1) + 3 * (j & 1);
      return { v: (u16(b, o + 48 + 2 * (ib >> 1)) >> s) & 7, where: `scales[${ib >> 1}] ${bitsText(s, 3)}` };
    },
    text: [
      'x_e = db_j · (iq1s_grid[i_k][e mod 8] + δ_g), δ_g = −1/8 if its bit is set else +1/8;  db_j = d · (2·s_j + 1)',
      'd = binary16 of the top nibbles of the u16 words scales[0…3] (scales[0] >> 12 | …);  k = g = ⌊e/8⌋, j = ⌊e/16⌋',
      'i_k = qs[k] | (qh nibble k & 7) << 8, qh nibble k = qh[⌊k/2⌋] >> 4·(k mod 2);  δ bit = bit 3 of that nibble;  s_j = (scales[⌊j/4⌋] >> (6·(⌊j/2⌋ mod 2) + 3·(j mod 2))) & 7',
    ],
  },
};

/** The formats with a layout description: the block formats the demo can take apart. */
export const LAYOUT_FORMATS = Object.freeze([...Object.keys(LAYOUT), ...Object.keys(GRID)]);

/** The grid table a format reads ('iq2xxs_grid'), or null for the other formats. @param {string} format */
export const gridOf = (format) => GRID[typeInfo(format).name]?.table ?? null;

/**
 * What the demo's per-tensor pass needs to know of a format: sub-block scales per block (ns), mins
 * or not, and the code histogram's range (the smallest code and how many codes).
 * @param {string} format
 * @returns {{ ns: number, mins: boolean, codeLo: number, codeCount: number } | null} null without a layout
 */
export function partsInfo(format) {
  const name = typeInfo(format).name,
    { blockSize } = typeInfo(name);
  const g = GRID[name];
  if (g) return { ns: blockSize / g.sub, mins: false, codeLo: g.range[0], codeCount: g.range[1] - g.range[0] + 1 };
  const c = layoutOf(name);
  if (!c) return null;
  const w = c.code.width;
  const lo = c.code.offset - (c.code.signed ? 2 ** (w - 1) : 0);
  return { ns: c.sc ? c.sc.n : 0, mins: !!c.m, codeLo: lo, codeCount: 2 ** w };
}

/**
 * Codes, sub-block scales and mins of the block at byte o of b, into the given arrays (the fast
 * path of decodeBlock, for whole tensors).
 * @param {string} format
 * @param {Uint8Array} b
 * @param {number} o
 * @param {Record<string, Int8Array> | null} grids the grid tables (demo/grids.js), for the grid formats
 * @param {Int32Array} codes blockSize codes
 * @param {Int32Array | null} sc
 * @param {Int32Array | null} m
 */
export function decodeParts(format, b, o, grids, codes, sc, m) {
  const name = typeInfo(format).name;
  const g = GRID[name];
  if (g) {
    const T = gridTable(g, grids);
    for (let e = 0; e < codes.length; e++) codes[e] = gridCode(g, T, b, o, e);
    if (sc) for (let j = 0; j < sc.length; j++) sc[j] = g.scale(b, o, j).v;
    return;
  }
  const c = /** @type {NonNullable<ReturnType<typeof layoutOf>>} */ (layoutOf(name));
  decodeInts(c.code, b, o, codes);
  if (sc && c.sc) decodeInts(c.sc, b, o, sc);
  if (m && c.m) decodeInts(c.m, b, o, m);
}

/** @param {GridLayout} g @param {Record<string, Int8Array> | null} grids */
function gridTable(g, grids) {
  const T = grids?.[g.table];
  if (!T) throw new Error(`the ${g.table} table is needed to take these blocks apart (gridTables in demo/grids.js)`);
  return T;
}

/** Element e's signed grid value. @param {GridLayout} g @param {Int8Array} T @param {Uint8Array} b @param {number} o @param {number} e */
function gridCode(g, T, b, o, e) {
  const v = T[g.index(b, o, Math.floor(e / g.width)).v * g.width + (e % g.width)];
  return g.sign && (g.sign(b, o, e >> 3).v >> (e & 7)) & 1 ? -v : v;
}

/**
 * Byte (within the field) and shift of value i of a part.
 * @param {Part} p
 * @param {number} i
 */
function locate(p, i) {
  if (p.kind === 'lin') return { byte: i + p.add, shift: p.shift };
  if (p.kind === 'trit')
    return { byte: p.from + ((i - p.add) % p.group), shift: 0, n: Math.floor((i - p.add) / p.group) };
  const per = 8 / p.bits,
    g = p.group;
  return { byte: p.from + g * Math.floor(i / (g * per)) + (i % g), shift: p.bits * Math.floor((i % (g * per)) / g) };
}

/**
 * A compiled decoder for one Values description over n indices: for each index, each part's
 * absolute byte offset in the block, shift, mask and position.
 * @typedef {{ n: number, width: number, signed: boolean, offset: number,
 *   src: { field: string, byte: number, shift: number, bits: number, at: number, trit: number }[][] }} Compiled
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
        const { byte, shift, n = -1 } = /** @type {{ byte: number, shift: number, n?: number }} */ (locate(p, i));
        if (!f || byte < 0 || byte >= f.size || shift + p.bits > 8 || n > 4)
          throw new Error(`${format}: layout part ${p.field}[${byte}] >> ${shift} lies outside the block's fields`);
        return { field: p.field, byte: f.offset + byte, shift, bits: p.bits, at: p.at, trit: n };
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
    for (const s of c.src[i])
      v |= (s.trit < 0 ? (b[o + s.byte] >> s.shift) & ((1 << s.bits) - 1) : tritOf(b[o + s.byte], s.trit)) << s.at;
    out[i] = (sign ? (v << sign) >> sign : v) + c.offset;
  }
  return out;
}

/** Base-3 digit n (0 = most significant) of a TQ1_0 byte, as ggml extracts it. @param {number} x @param {number} n */
export const tritOf = (x, n) => (((x * 3 ** n) & 255) * 3) >> 8;

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
  const name = typeInfo(format).name;
  const l = LAYOUT[name];
  if (l?.e8m0) r[l.d] = 2 ** (b[o + fieldOffset(name, l.d)] - 128);
  const g = GRID[name];
  if (g?.dBits) r.d = halfToFloat(g.dBits(b, o));
  for (const f of blockFields(format) ?? []) {
    if (f.kind === 'f16' && f.size === 2) r[f.name] = halfToFloat(dv.getUint16(o + f.offset, true));
    if (f.kind === 'f32' && f.size === 4) r[f.name] = dv.getFloat32(o + f.offset, true);
  }
  return r;
}

/**
 * A block taken apart: its scalar fields, its sub-blocks' integer scales and mins, every
 * element's code, sub-block and where its bits are, and its value recomputed from the fields in
 * ggml's float order (f32, one rounding per operation); scale: each sub-block's multiplier of its
 * codes (d · sc_j, or the grid formats' db_j), named by scaleName. For the grid formats the codes are the
 * signed grid values, sc the sub-block scales s_j, and where() names the grid row and sign bit.
 * @param {string} format
 * @param {Uint8Array} b one block's bytes
 * @param {Record<string, Int8Array> | null} [grids] the grid tables (gridTables in demo/grids.js);
 *   needed for the grid formats only
 * @throws {Error} for a format without a layout description, or a grid format without grids
 */
export function decodeBlock(format, b, grids = null) {
  const gl = GRID[typeInfo(format).name];
  if (gl) return decodeGridBlock(format, gl, b, gridTable(gl, grids));
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
  const lut = l.lut ? LUTS[/** @type {keyof typeof LUTS} */ (l.lut)] : null;
  const values = new Float32Array(codes.length);
  // NVFP4: no d, each sub-block's scale is its UE4M3 byte's value (ggml: code value · scale)
  const ue = l.ue4m3 && sc ? Float32Array.from(sc, ue4m3Half) : null;
  for (let e = 0; e < codes.length; e++) {
    const j = l.sub ? Math.floor(e / l.sub) : 0;
    const q = lut ? lut[codes[e]] : codes[e];
    const x = ue ? f(q * ue[j]) : f(f(D * (sc ? sc[j] : 1)) * q);
    values[e] = l.min ? f(x + l.minSign * f(M * (m ? m[j] : 1))) : x;
  }
  const where = (/** @type {Compiled} */ k, /** @type {number} */ i) =>
    k.src[i]
      .map(
        (s) =>
          `${s.field}[${s.byte - fieldOffset(format, s.field)}]${s.trit < 0 ? bitRange(s.shift, s.bits) : ` trit ${s.trit}`}`,
      )
      .join(' ');
  const scale = ue ?? (sc && Float32Array.from(sc, (s) => f(D * s)));
  return {
    scalars,
    codes,
    sc,
    m,
    values,
    scale,
    scaleName: ue ? 'ue4m3(sc_j)' : 'd · sc_j',
    sub: l.sub,
    where: (/** @type {number} */ e) => where(c.code, e),
    scWhere: (/** @type {number} */ j) => (c.sc ? where(c.sc, j) : ''),
    mWhere: (/** @type {number} */ j) => (c.m ? where(c.m, j) : ''),
  };
}

/**
 * decodeBlock for a grid format.
 * @param {string} format
 * @param {GridLayout} g
 * @param {Uint8Array} b
 * @param {Int8Array} T
 */
function decodeGridBlock(format, g, b, T) {
  const f = Math.fround;
  const scalars = scalarFields(format, b);
  const D = scalars.d;
  const { blockSize } = typeInfo(format);
  const ns = blockSize / g.sub;
  const sc = new Int32Array(ns),
    db = new Float32Array(ns);
  for (let j = 0; j < ns; j++) {
    sc[j] = g.scale(b, 0, j).v;
    db[j] = f(f(D * (g.db[0] + g.db[1] * sc[j])) * g.db[2]);
  }
  const codes = new Int32Array(blockSize),
    values = new Float32Array(blockSize);
  for (let e = 0; e < blockSize; e++) {
    codes[e] = gridCode(g, T, b, 0, e);
    const j = Math.floor(e / g.sub);
    if (g.delta) values[e] = f(db[j] * f(codes[e] + (g.delta(b, 0, e >> 3).v ? -0.125 : 0.125)));
    else values[e] = codes[e] < 0 ? -f(db[j] * -codes[e]) : f(db[j] * codes[e]);
  }
  const where = (/** @type {number} */ e) => {
    const k = Math.floor(e / g.width),
      i = g.index(b, 0, k);
    const row = `${g.table}[${i.v}][${e % g.width}] = ${T[i.v * g.width + (e % g.width)]} (${i.where})`;
    if (g.sign) {
      const s = g.sign(b, 0, e >> 3);
      return `${row}, sign bit ${e & 7} of ${s.where} = ${(s.v >> (e & 7)) & 1}`;
    }
    const d = /** @type {NonNullable<GridLayout['delta']>} */ (g.delta)(b, 0, e >> 3);
    return `${row}, δ ${d.v ? '−' : '+'}1/8 (${d.where})`;
  };
  return {
    scalars,
    codes,
    sc,
    m: null,
    values,
    scale: db,
    scaleName: 'db_j',
    sub: g.sub,
    where,
    scWhere: (/** @type {number} */ j) => g.scale(b, 0, j).where,
    mWhere: () => '',
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
  if (p.kind === 'trit') {
    const i = p.add ? `(${v} − ${p.add})` : v;
    return `trit ⌊${i}/${p.group}⌋ of ${p.field}[${p.from ? `${p.from} + ` : ''}${i} mod ${p.group}]`;
  }
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
    const times = p.bits === 1 ? '' : `${p.bits}·`;
    shift = per === 1 ? '0' : g === 1 ? `${times}${inRun}` : `${times}⌊${inRun}/${g}⌋`;
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
  const gl = GRID[typeInfo(format).name];
  if (gl) return [...gl.text];
  const c = layoutOf(format);
  if (!c) return [];
  const l = c.layout,
    { blockSize } = typeInfo(format);
  const ns = l.sub ? blockSize / l.sub : 0;
  const scale = l.ue4m3 ? 'ue4m3(sc_j)' : l.sc ? `(${l.d} · sc_j)` : l.d;
  const min = l.min ? ` ${l.minSign < 0 ? '−' : '+'} ${l.m ? `${l.min} · m_j` : l.min}` : '';
  const q = l.lut ? `${l.lut}[q_e]` : 'q_e';
  const lines = [`x_e = ${scale} · ${q}${min}${l.sub ? `,  j = ⌊e/${l.sub}⌋ (the sub-block)` : ''}`];
  lines.push(`q_e = ${valuesText(l.code, 'e', blockSize)}   (e = 0…${blockSize - 1})`);
  if (l.sc) lines.push(`sc_j = ${valuesText(l.sc, 'j', ns)}   (j = 0…${ns - 1})`);
  if (l.m) lines.push(`m_j = ${valuesText(l.m, 'j', ns)}`);
  if (l.lut) lines.push(`${l.lut} = ${LUTS[/** @type {keyof typeof LUTS} */ (l.lut)].join(' ')}`);
  if (l.e8m0) lines.push(`${l.d} = 2^(${l.d} byte − 128)  (E8M0, halved: the codebook holds 2 × E2M1)`);
  if (l.ue4m3)
    lines.push(
      'ue4m3(b) = (1 + m/8) · 2^(e − 7) · 0.5, e = (b >> 3) & 15, m = b & 7;  m · 2^−9 · 0.5 for e = 0;  0 for b = 0x7F  (UE4M3, halved: the codebook holds 2 × E2M1)',
    );
  return lines;
}

/**
 * What element e of a grid-format block is made of, for the inspector's step-by-step text: the
 * grid row index i_k and where it was read, the column, the sign byte and bit (or the ±1/8 delta),
 * and the sub-block scale s_j; db: db_j = (d · (db[0] + db[1]·s_j)) · db[2]. null for the other
 * formats.
 * @param {string} format
 * @param {Uint8Array} b one block's bytes
 * @param {number} e
 */
export function gridPieces(format, b, e) {
  const g = GRID[typeInfo(format).name];
  if (!g) return null;
  const k = Math.floor(e / g.width);
  const sign = g.sign ? g.sign(b, 0, e >> 3) : null;
  const delta = g.delta ? g.delta(b, 0, e >> 3) : null;
  return {
    table: g.table,
    width: g.width,
    sub: g.sub,
    db: g.db,
    k,
    col: e % g.width,
    index: g.index(b, 0, k),
    sign: sign && { byte: sign.v, bit: e & 7, set: (sign.v >> (e & 7)) & 1, where: sign.where },
    delta: delta && { set: delta.v, where: delta.where },
    j: Math.floor(e / g.sub),
    scale: g.scale(b, 0, Math.floor(e / g.sub)),
  };
}
