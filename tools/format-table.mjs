// Prints the README's format table from the type table and a build's exports: what blockquant does
// with every ggml type. tests/readme.test.js checks that the README holds exactly this table.
// Usage: node tools/format-table.mjs (after make test-wasm)
import { readFileSync } from 'node:fs';
import { init, knownTypes, typeInfo } from '../js/index.js';

/** Integer and F64 tensors decode to their own typed arrays (dequantizeTensor, dequantizeRows). */
const TYPED = { i8: 'Int8Array', i16: 'Int16Array', i32: 'Int32Array', i64: 'BigInt64Array', f64: 'Float64Array' };

/** What the type table does not say of a type: its format in a few words, and what is ours. */
const NOTES = {
  nvfp4: 'a UE4M3 scale per 16 values, E2M1 codes; no llama-quantize output type (converted models)',
  q1_0: 'sign bits under one d, the mean absolute value of the 128 values',
  q2_0: 'codes −d, 0, +d (code 3, 2d, decodes but ggml never writes it); not the pre-release 128-value Q2_0 files',
};
/** The pairs whose SIMD128 dot adds in ggml's order, so that every build equals its vec_dot to the bit. */
const EXACT_DOT = new Set([
  'nvfp4',
  'q1_0',
  'q2_0',
  'tq1_0',
  'tq2_0',
  'iq2_xxs',
  'iq2_xs',
  'iq2_s',
  'iq3_xxs',
  'iq3_s',
  'iq1_s',
  'iq1_m',
]);

/**
 * The table as markdown lines.
 * @param {Record<string, unknown>} exports the exports of the SIMD128 build's test variant
 *   (build/test/blockquant-simd128.wasm, whose __simd128 names say which kernels have SIMD code)
 * @returns {string[]}
 */
export function formatTable(exports) {
  const simd = (/** @type {string} */ name) => typeof exports[`${name}__simd128`] === 'function';
  const ids = knownTypes();
  const activation = new Set(ids.filter((id) => ids.some((u) => u !== id && typeInfo(u).vecDot === id)));
  const rows = [
    '| id | type | block (values / bytes) | bits/weight | quantize | dequantize | dot with | SIMD128 | notes |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const id of ids) {
    const t = typeInfo(id);
    const yes = (/** @type {boolean} */ b) => (b ? 'yes' : '-');
    const pair = t.dot ? typeInfo(t.vecDot).name : '';
    const dots = [...new Set([pair, t.dotF32 ? 'f32' : ''].filter(Boolean))].join(', ') || '-';
    const vec = [
      (simd(`bq_${t.name}_quantize`) || simd(`bq_${t.name}_quantize_rows`)) && 'quantize',
      simd(`bq_${t.name}_dequantize`) && 'dequantize',
      t.dot && simd(`bq_${t.name}_dot_${pair}`) && 'dot',
      t.matvec && t.dot && simd(`bq_${t.name}_matvec_${pair}`) && 'matvec',
    ].filter(Boolean);
    const notes = [];
    if (NOTES[t.name]) notes.push(NOTES[t.name]);
    if (EXACT_DOT.has(t.name)) notes.push(`dot with ${pair} equal to ggml's on every build`);
    if (TYPED[t.name]) notes.push(`dequantizeTensor returns a ${TYPED[t.name]}`);
    if (activation.has(id) && !t.dot && t.blockSize > 1) notes.push('activation format (the other operand of dots)');
    if (t.dequantize && !t.quantize) notes.push("ggml's quantizer needs an importance matrix: decode only");
    if (t.stats) notes.push(`blockStats${t.subBlock ? ` (and per ${t.subBlock}-value sub-block)` : ''}`);
    const bits = ((t.typeSize * 8) / t.blockSize).toFixed(4).replace(/\.?0+$/, '');
    rows.push(
      `| ${id} | ${t.name} | ${t.blockSize} / ${t.typeSize} | ${bits} | ${yes(t.quantize)} | ${yes(t.dequantize || !!TYPED[t.name])} | ${dots} | ${vec.join(', ') || '-'} | ${notes.join('; ') || ''} |`,
    );
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const module = readFileSync(new URL('../build/test/blockquant-simd128.wasm', import.meta.url));
  const bq = await init({ backend: 'simd128', module });
  console.log(formatTable(/** @type {any} */ (bq.exports)).join('\n'));
}
