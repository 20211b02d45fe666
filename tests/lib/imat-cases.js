// What the quantizer tests against ggml share (imat-qk, imat-iq43, imat-iq2, imat-iq1): the
// kernels' statuses, the hostile inputs by row length, running a quantize kernel of a raw build on
// one input, and checking its bytes against ggml's with the row (and its kind) a difference is in.
import assert from 'node:assert/strict';
import { hostileRows, ROW_KINDS } from './rows.js';
import { firstDiff } from './helpers.js';
import { byteLength } from '../../js/index.js';

/** The kernels' statuses (src/bq.h). */
export const BQ_OK = 0,
  BQ_EINVAL = -1,
  BQ_ENOTABLES = -2,
  BQ_EDOMAIN = -3;

/**
 * @typedef {{ cols: number, x: Float32Array, kinds: string[] }} Input
 */

/**
 * Inputs for each row length: every row kind in one matrix, a single row and a pair (other kinds
 * first); at 4096 or more, three rows and one.
 * @param {number[]} lengths row lengths
 * @param {number} seed
 * @returns {Input[]}
 */
export function inputsOf(lengths, seed) {
  /** @type {Input[]} */
  const out = [];
  lengths.forEach((cols, li) => {
    const shapes =
      cols >= 4096
        ? [
            [3, 5 * li],
            [1, 13 + li],
          ]
        : [
            [ROW_KINDS.length, 3 * li],
            [1, 7 * li],
            [2, 14 + li],
          ];
    shapes.forEach(([rows, offset], si) => {
      const { x, kinds } = hostileRows(rows, cols, seed + 31 * li + si, offset);
      out.push({ cols, x, kinds });
    });
  });
  return out;
}

/**
 * Where byte d of an input's output falls: its row and that row's kind.
 * @param {Input} c @param {number} d @param {number} bytes the output's length
 */
export function where(c, d, bytes) {
  const rows = c.x.length / c.cols;
  const row = Math.floor(d / (bytes / rows));
  return `row ${row} (${c.kinds[row]}), byte ${d % (bytes / rows)} of the row`;
}

/**
 * Runs a quantize kernel of a raw build (tests/lib/raw.js) on input c, with weights w (or none):
 * a _quantize_rows kernel on its rows, a plain one on all its values.
 * @param {import('./raw.js').Raw} raw @param {string} name @param {string} type
 * @param {Input} c @param {Float32Array | null} w
 * @returns {{ status: number, got: Uint8Array }}
 */
export function runKernel(raw, name, type, c, w) {
  raw.reset();
  const rows = c.x.length / c.cols;
  const bytes = byteLength(type, c.x.length);
  const xp = raw.put(c.x),
    wp = w ? raw.put(w) : 0,
    yp = raw.alloc(bytes);
  const status = name.includes('_quantize_rows')
    ? raw.x[name](xp, yp, rows, c.cols, wp)
    : raw.x[name](xp, yp, c.x.length);
  return { status, got: raw.bytes(yp, bytes) };
}

/**
 * Checks a kernel's result against ggml's bytes, or its abort (want null: BQ_EDOMAIN).
 * @param {string} what @param {Input} c @param {{ status: number, got: Uint8Array }} r
 * @param {Uint8Array | null} want
 */
export function check(what, c, { status, got }, want) {
  if (want === null) {
    assert.equal(status, BQ_EDOMAIN, `${what}: ggml aborts on this input, the kernel must return BQ_EDOMAIN`);
    return;
  }
  assert.equal(status, BQ_OK, `${what}: status`);
  const d = firstDiff(got, want);
  assert.equal(d, -1, `${what}: ${where(c, d, got.length)} differs`);
}
