// blockquant stats FILE [--tensor NAME] [--as T,...]: the error of quantizing each float tensor
// to each format.
import { init } from '../../node.js';
import { about, tag, Usage } from '../errors.js';
import { openInput, progress } from '../io.js';
import { bitsPerWeight, formatIn, names, wrapped, FLOATS, STATS_DEFAULT, STATS_FORMATS } from '../formats.js';

/** @typedef {import('../formats.js').Format} Format */

/** @type {import('../io.js').Command['run']} */
async function stats(pos, opt, print, err) {
  /** @type {Format[]} */
  const formats = [];
  for (const name of typeof opt.as === 'string' ? opt.as.split(',') : STATS_DEFAULT.map((t) => t.name)) {
    const t = formatIn(name, STATS_FORMATS);
    if (!t) throw new Usage(`--as: ${name} is not one of ${names(STATS_FORMATS)}`, 'stats');
    formats.push(t);
  }
  const { f } = await openInput(pos[0]);
  try {
    const bq = await init();
    const floats = f.tensors.filter((t) => FLOATS.has(t.type) && (opt.tensor === undefined || t.name === opt.tensor));
    if (opt.tensor !== undefined && floats.length === 0)
      throw tag(new Error(`no F32/F16/BF16 tensor named ${JSON.stringify(opt.tensor)}`), pos[0]);
    // quantize never converts a 1-D tensor (norms, biases): unless asked for (--all, or by
    // --tensor), they are one summary line, not ten lines each.
    const oneD = opt.all || opt.tensor !== undefined ? [] : floats.filter((t) => nDims(t.dims) < 2);
    const chosen = floats.filter((t) => !oneD.includes(t));
    const total = chosen.reduce((s, t) => s + t.nElements, 0);
    let done = 0;
    print(
      `${'tensor'.padEnd(32)} ${'format'.padEnd(7)} bits/w   RMSE         max |err|    SNR dB   worst block  worst sub`,
    );
    const e = (/** @type {number} */ v) => v.toExponential(4);
    for (const t of chosen) {
      // chosen holds float tensors only, which decode to Float32Array.
      const x = /** @type {Float32Array} */ (await about(pos[0], () => bq.dequantizeTensor(f, t.name)));
      const ne0 = t.dims[0] ?? 1;
      let signal = 0;
      for (const v of x) signal += v * v;
      for (const fmt of formats) {
        const head = `${t.name.padEnd(32)} ${fmt.name.padEnd(7)}`;
        if (ne0 % fmt.blockSize !== 0) {
          print(`${head} rows of ${ne0} are not whole blocks of ${fmt.blockSize}`);
          continue;
        }
        const m = errors(bq, fmt, x);
        // No error at all (an all-zero or exactly representable tensor): "exact", not an infinite SNR.
        const snr = m.se === 0 ? 'exact' : (10 * Math.log10(signal / m.se)).toFixed(2);
        print(
          `${head} ${bitsPerWeight(fmt).toFixed(2).padStart(6)}   ${e(Math.sqrt(m.se / x.length))}   ${e(m.max)}   ${snr.padStart(7)}   ${m.block < 0 ? '-'.padEnd(10) : e(m.block)}   ${m.sub < 0 ? '-' : e(m.sub)}`,
        );
      }
      done += t.nElements;
      progress(err, done, total);
    }
    if (oneD.length) {
      const n = oneD.reduce((a, t) => a + t.nElements, 0);
      print(
        `(${oneD.length} 1-D float tensor${oneD.length > 1 ? 's' : ''}, ${n} values, not shown: quantize keeps them as they are; --all shows them)`,
      );
    }
    return 0;
  } finally {
    await f.close();
  }
}

/** ggml_n_dims: the dimensions up to the last one longer than 1 (at least 1). */
const nDims = (/** @type {number[]} */ dims) => Math.max(1, ...dims.map((n, d) => (n > 1 ? d + 1 : 0)));

/**
 * The error of quantizing x to fmt: the sum of squared errors, the largest |error|, and the RMSE
 * of the worst block and sub-block (-1 when the format has none). Block formats from their block
 * statistics; float formats (one value per "block") by a round trip.
 * @param {import('../../codec.js').Codec} bq @param {Format} fmt @param {Float32Array} x
 */
function errors(bq, fmt, x) {
  let se = 0,
    max = 0,
    block = -1,
    sub = -1;
  if (fmt.blockSize === 1) {
    const y = bq.dequantize(fmt.id, bq.quantize(fmt.id, x));
    for (let i = 0; i < x.length; i++) {
      const d = Math.abs(x[i] - y[i]);
      se += d * d;
      max = Math.max(max, d);
    }
    return { se, max, block, sub };
  }
  const s = bq.blockStats(fmt.id, x);
  for (let b = 0; b < s.rmse.length; b++) {
    se += s.rmse[b] * s.rmse[b] * fmt.blockSize;
    max = Math.max(max, s.maxAbs[b]);
    block = Math.max(block, s.rmse[b]);
  }
  if (s.sub) for (const r of s.sub.rmse) sub = Math.max(sub, r);
  return { se, max, block, sub };
}

/** @type {import('../io.js').Command} */
export const command = {
  usage: 'stats FILE [--tensor NAME] [--as T,...] [--all]',
  about: 'error of quantizing each F32/F16/BF16 tensor',
  positionals: ['FILE'],
  options: { tensor: { type: 'string' }, as: { type: 'string' }, all: { type: 'boolean' } },
  details: `  --tensor NAME  that tensor only
  --as T,...     the formats to try (default ${STATS_DEFAULT.map((t) => t.name).join(',')};
                 any of ${wrapped(STATS_FORMATS)})
  --all          the 1-D tensors too (norms, biases: quantize never converts them; without
                 --all or --tensor they are summed up in one line)

Per tensor and format: bits per weight, RMSE and max |err| over the tensor, SNR, and the RMSE of
the worst block and of the worst sub-block (formats with sub-block scales; '-' otherwise). A
format whose blocks do not fit the tensor's rows (ne0) gets a line saying so; SNR is 'exact' where
there is no error at all.
`,
  run: stats,
};
