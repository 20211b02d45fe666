// What the quantizer tests against ggml share (imat-qk, imat-iq43, imat-iq2, imat-iq1): the
// kernels' statuses, the hostile inputs by row length, running a quantize kernel of a raw build on
// one input, and checking its bytes against ggml's with the row (and its kind) a difference is in.
import assert from 'node:assert/strict';
import { hostileRows, imatrix, IMATRIX_KINDS, ROW_KINDS } from './rows.js';
import * as ggml from './ggml.js';
import { variants } from './imat-builds.js';
import { firstDiff } from './helpers.js';
import { byteLength, typeId } from '../../js/index.js';

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

/** Row kinds ggml quantizes with any moderate weights: it aborts only on non-finite or extreme rows. */
const MODERATE = new Set(['normal', 'heavy-tailed', 'outlier columns', 'all equal', 'zeros', 'sparse', 'ramp', 'ties']);

/**
 * Every variant of bq_<t>_quantize_rows in every build against ggml_quantize_chunk on the inputs,
 * each with the imatrix kinds (at 4096 columns and more the first two and the last) and, where
 * plain, without weights. ggml aborts a whole call for one bad row: the rows of an aborted matrix
 * are compared one by one too. Then checks the comparisons are not vacuous: every row of a
 * moderate kind quantizes, in its matrix or alone, unless its weights are huge.
 * @param {string} t the type
 * @param {Input[]} inputs
 * @param {{ plain: boolean, seed: number, builds: { name: string, raw: import('./raw.js').Raw }[] }} o
 * @returns {{ names: string[][], cases: (Input & { w: Float32Array | null, wkind: string })[], want: (Uint8Array | null)[] }}
 */
export function compareRowsKernels(t, inputs, { plain, seed, builds }) {
  const id = typeId(t);
  /** @type {(Input & { w: Float32Array | null, wkind: string })[]} */
  const cases = [];
  inputs.forEach((c, ci) => {
    if (plain) cases.push({ ...c, w: null, wkind: 'no weights' });
    IMATRIX_KINDS.forEach(([kind], k) => {
      if (c.cols >= 4096 && k > 1 && k !== IMATRIX_KINDS.length - 1) return;
      cases.push({ ...c, w: imatrix(c.cols, k, seed + 7 * ci + k), wkind: `a ${kind} imatrix` });
    });
  });
  const quantize = (/** @type {typeof cases} */ cs) =>
    ggml.quantize(cs.map((c) => ({ type: id, x: c.x, cols: c.cols, imatrix: c.w })));
  let want = quantize(cases);
  const single = cases.flatMap((c, i) => {
    const rows = c.x.length / c.cols;
    if (want[i] !== null || rows === 1) return [];
    return c.kinds.map((kind, r) => ({ ...c, x: c.x.slice(r * c.cols, (r + 1) * c.cols), kinds: [kind] }));
  });
  const firsts = cases.length;
  cases.push(...single);
  want = [...want, ...quantize(single)];
  const names = builds.map((b) => variants(b.raw, `bq_${t}_quantize_rows`));
  assert.ok(
    names.every((n) => n.length >= 2),
    `${t}: the builds export bq_${t}_quantize_rows and its __ref`,
  );
  builds.forEach((b, bi) => {
    for (const name of names[bi])
      cases.forEach((c, i) =>
        check(
          `${b.name} ${name} ${c.x.length / c.cols}x${c.cols} with ${c.wkind}`,
          c,
          runKernel(b.raw, name, t, c, c.w),
          want[i],
        ),
      );
  });
  cases.forEach((c, i) => {
    if (want[i] !== null || (i < firsts && c.kinds.length > 1)) return;
    assert.ok(
      !MODERATE.has(c.kinds[0]) || /huge/.test(c.wkind),
      `${t}: ggml aborts on a ${c.kinds[0]} row with ${c.wkind}`,
    );
  });
  assert.ok(
    want.some((w) => w !== null),
    `${t}: some rows quantize`,
  );
  return { names, cases, want };
}
