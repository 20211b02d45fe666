// The benchmark's pure-JS baseline dequantizers decode exactly what the codecs decode, so the
// benchmark compares like with like.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsDequantize } from '../bench/js-dequant.js';
import { SEED, codec, edgeInputs, firstDiff } from './lib/helpers.js';

const bq = await codec();

test(`bench JS baselines equal the codecs, seed ${SEED}`, () => {
  const x = edgeInputs(70, SEED);
  for (const [type, fn] of Object.entries(jsDequantize)) {
    const q = bq.quantize(type, x);
    const y = new Float32Array(x.length);
    fn(q, y);
    assert.equal(firstDiff(y, bq.dequantize(type, q)), -1, type);
  }
});
