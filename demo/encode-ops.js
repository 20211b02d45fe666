// The viewer worker's "what an importance matrix changes" operation (worker.js adds it to its
// handlers): the row holding an inspected block, quantized to the block's format without weights
// and with them (a loaded imatrix file's weights for the tensor, else x² of the row as the
// stand-in ggml's own quantizers use when they have none), and the block's bytes, decoded values
// and errors of each. Whole rows, because ggml's weighted Q4_0..Q5_1 weigh each value by its
// row's mean square.
import { readImatrix, typeInfo } from '../js/index.js';
import { blockError } from './encode-steps.js';

/**
 * @typedef {{ name: string, format: string, block: number, imatrix: File | null }} WeightedArgs
 * @typedef {{ bytes: Uint8Array, decoded: Float32Array, rmse: number, maxAbs: number, weighted: number }} Side
 * @typedef {{ format: string, block: number, weightsFrom: string, weights: Float32Array, original: Float32Array,
 *   plain: Side, weightedSide: Side, usesWeights: boolean }} WeightedResult
 */

/**
 * @param {() => { file: any, x: Float32Array | null, name: string | null }} state the open file and
 *   the analysed tensor's f32 values (its first rows) in the worker
 * @param {Promise<any>} bqPromise the worker's codec
 */
export function encodeOps(state, bqPromise) {
  /** @type {{ key: string, imat: any } | null} */
  let cache = null;
  return {
    /** @param {WeightedArgs} args @returns {Promise<WeightedResult>} */
    async weighted({ name, format, block, imatrix }) {
      const bq = await bqPromise;
      const s = state();
      if (!s.file || !s.x || s.name !== name) throw new Error(`${name} is not the analysed tensor; choose it again`);
      const t = s.file.tensors.find((/** @type {{ name: string }} */ x) => x.name === name);
      const rowLen = t.dims[0] ?? 1;
      const { blockSize, weighted: usesWeights } = typeInfo(format);
      const at = block * blockSize;
      const row = Math.floor(at / rowLen);
      if (!Number.isInteger(block) || block < 0 || (row + 1) * rowLen > s.x.length)
        throw new Error(`${name} has no analysed ${format} block ${block}`);
      const x = s.x.subarray(row * rowLen, (row + 1) * rowLen);
      /** @type {Float32Array} */
      let w;
      let weightsFrom;
      if (imatrix) {
        const key = `${imatrix.name}:${imatrix.size}:${imatrix.lastModified}`;
        if (cache?.key !== key) cache = { key, imat: await readImatrix(imatrix) };
        const ws = cache.imat.weightsFor(name, rowLen);
        if (!ws) throw new Error(`${imatrix.name} has no weights for ${name}`);
        const rowsPerExpert = t.dims[1] ?? 1;
        w = ws[ws.length > 1 ? Math.floor(row / rowsPerExpert) : 0];
        weightsFrom = `${imatrix.name} (its weights for ${name})`;
      } else {
        w = Float32Array.from(x, (v) => v * v);
        // All-zero weights would leave the weighted search nothing to fit: ggml's default then.
        if (!w.some((v) => v > 0)) w.fill(1);
        weightsFrom = 'x² of this row (no importance matrix loaded)';
      }
      const off = at - row * rowLen;
      const original = x.slice(off, off + blockSize);
      const ww = w.subarray(off, off + blockSize);
      const side = (/** @type {Uint8Array} */ q) => {
        const { typeSize } = typeInfo(format);
        const bytes = q.slice((off / blockSize) * typeSize, (off / blockSize + 1) * typeSize);
        const decoded = bq.dequantize(format, bytes);
        return { bytes, decoded, ...blockError(original, decoded, ww) };
      };
      return {
        format,
        block,
        weightsFrom,
        weights: ww.slice(),
        original,
        plain: side(bq.quantize(format, x, { rowLength: rowLen })),
        weightedSide: side(bq.quantize(format, x, { rowLength: rowLen, imatrix: w })),
        usesWeights,
      };
    },
  };
}
