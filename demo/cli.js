#!/usr/bin/env node
// make demo, the terminal part: quantize a bundled synthetic tensor to each format through the
// public API and print bits per weight, RMSE, max |error| and SNR, and which build ran.
import { init, typeInfo } from '../js/index.js';
import { errorSummary } from './metrics.js';
import { syntheticWeights } from './sample.js';

const rows = 256,
  cols = 1024;
const w = syntheticWeights(rows, cols, 42);
const bq = await init();

console.log(`blockquant demo: a synthetic ${rows}x${cols} weight tensor (heavy tails, outlier channels)`);
console.log(`build: ${bq.backend}\n`);
console.log('format  bits/weight   RMSE        max |error|   SNR (dB)   worst block RMSE');
for (const type of ['q8_0', 'q6_K', 'q5_K', 'q5_1', 'q5_0', 'q4_K', 'q4_1', 'q4_0', 'q3_K', 'q2_K', 'bf16', 'f16']) {
  const { blockSize, typeSize } = typeInfo(type);
  const q = bq.quantize(type, w);
  const { rmse, maxAbs, snr } = errorSummary(w, bq.dequantize(type, q));
  const worst = bq.blockStats(type, w).rmse.reduce((a, b) => Math.max(a, b), 0);
  console.log(
    `${type.padEnd(6)}  ${((typeSize * 8) / blockSize).toFixed(2).padStart(11)}   ${rmse.toExponential(3)}   ${maxAbs.toExponential(3)}     ${snr.toFixed(2).padStart(7)}    ${worst.toExponential(3)}`,
  );
}
