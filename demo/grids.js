// The IQ grid tables (ggml's iq2xxs_grid, iq2xs_grid, iq2s_grid, iq3xxs_grid, iq3s_grid and
// iq1s_grid), read out of the codec's own build: the tables live inside the wasm module and are not
// exported, so each one is recovered by dequantizing probe blocks whose grid indices count 0, 1, 2,
// ... with every sign positive and a scale that makes each value a known multiple of its grid byte.
// tests/demo-layout.test.js checks every recovered table against ggml's SHA-256.

import { typeInfo } from '../js/types.js';

/**
 * @typedef {{ name: string, width: number, entries: number, perBlock: number,
 *   probe: (b: Uint8Array, first: number) => void, scale: number, delta: number }} Probe
 */

/** Little-endian u16 store. @param {Uint8Array} b @param {number} o @param {number} v */
const put16 = (b, o, v) => {
  b[o] = v & 255;
  b[o + 1] = (v >> 8) & 255;
};
const ONE = 0x3c00; // binary16 1.0

/** For each grid format: the table it reads, and how to write indices first.. into one block. */
/** @type {Record<string, Probe>} */
const PROBES = {
  // db = (1 * (0.5 + 0)) * 0.25 = 0.125; the sign words are zero (ksigns[0] = no negatives).
  iq2_xxs: {
    name: 'iq2xxs_grid',
    width: 8,
    entries: 256,
    perBlock: 32,
    scale: 0.125,
    delta: 0,
    probe: (b, first) => {
      put16(b, 0, ONE);
      for (let k = 0; k < 32; k++) b[2 + 8 * (k >> 2) + (k & 3)] = first + k;
    },
  },
  iq2_xs: {
    name: 'iq2xs_grid',
    width: 8,
    entries: 512,
    perBlock: 32,
    scale: 0.125,
    delta: 0,
    probe: (b, first) => {
      put16(b, 0, ONE);
      for (let k = 0; k < 32; k++) put16(b, 2 + 2 * k, first + k);
    },
  },
  iq2_s: {
    name: 'iq2s_grid',
    width: 8,
    entries: 1024,
    perBlock: 32,
    scale: 0.125,
    delta: 0,
    probe: (b, first) => {
      put16(b, 0, ONE);
      for (let k = 0; k < 32; k++) {
        const i = first + k;
        b[2 + k] = i & 255;
        b[66 + (k >> 2)] |= (i >> 8) << (2 * (k & 3));
      }
    },
  },
  // db = (1 * 0.5) * 0.5 = 0.25
  iq3_xxs: {
    name: 'iq3xxs_grid',
    width: 4,
    entries: 256,
    perBlock: 64,
    scale: 0.25,
    delta: 0,
    probe: (b, first) => {
      put16(b, 0, ONE);
      for (let k = 0; k < 64; k++) b[2 + k] = first + k;
    },
  },
  // db = 1 * (1 + 2 * 0) = 1
  iq3_s: {
    name: 'iq3s_grid',
    width: 4,
    entries: 512,
    perBlock: 64,
    scale: 1,
    delta: 0,
    probe: (b, first) => {
      put16(b, 0, ONE);
      for (let k = 0; k < 64; k++) {
        const i = first + k;
        b[2 + k] = i & 255;
        b[66 + (k >> 3)] |= (i >> 8) << (k & 7);
      }
    },
  },
  // dl = 1 * (2 * 0 + 1) = 1; delta +0.125 (bit 15 of qh clear): x = grid + 0.125
  iq1_s: {
    name: 'iq1s_grid',
    width: 8,
    entries: 2048,
    perBlock: 32,
    scale: 1,
    delta: 0.125,
    probe: (b, first) => {
      put16(b, 0, ONE);
      for (let k = 0; k < 32; k++) {
        const i = first + k;
        b[2 + k] = i & 255;
        const o = 34 + 2 * (k >> 2);
        put16(b, o, b[o] | (b[o + 1] << 8) | ((i >> 8) << (3 * (k & 3))));
      }
    },
  },
};

/** Grid table name -> its entries, width bytes each, as signed bytes (every grid byte is < 128). */
export const GRID_OF = Object.freeze(Object.fromEntries(Object.entries(PROBES).map(([f, p]) => [f, p.name])));

/**
 * Recovers every IQ grid table from a codec's dequantize.
 * @param {{ dequantize: (format: string, bytes: Uint8Array) => Float32Array }} bq an initialised codec
 * @returns {Record<string, Int8Array>} table name -> entries * width bytes (new arrays, caller owns)
 * @throws {Error} when a probe decodes to a value that is not a grid byte (a codec that does not
 *   decode as ggml does)
 */
export function gridTables(bq) {
  /** @type {Record<string, Int8Array>} */
  const out = {};
  for (const [format, p] of Object.entries(PROBES)) {
    const { typeSize } = typeInfo(format);
    const nb = p.entries / p.perBlock;
    const bytes = new Uint8Array(nb * typeSize);
    for (let k = 0; k < nb; k++) p.probe(bytes.subarray(k * typeSize, (k + 1) * typeSize), k * p.perBlock);
    const x = bq.dequantize(format, bytes);
    const t = new Int8Array(p.entries * p.width);
    for (let i = 0; i < t.length; i++) {
      const v = x[i] / p.scale - p.delta;
      if (!Number.isInteger(v) || v < -128 || v > 127)
        throw new Error(`${format}: probe value ${x[i]} at ${i} is not a grid byte`);
      t[i] = v;
    }
    out[p.name] = t;
  }
  return out;
}
