// ggml's own golden vectors (tests/fixtures/golden, see PROVENANCE.md) against the public API of
// the build under test, and against the JS oracle (which checks the oracle itself).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oracle from './lib/oracle.js';
import { BACKEND, codec, golden, firstDiff, sameFloat } from './lib/helpers.js';

const bq = await codec();

test(`golden quantize/dequantize, ${BACKEND} build`, () => {
  const { manifest } = golden;
  assert.equal(manifest.quantized.length, 48);
  for (const e of manifest.quantized) {
    const x = golden.floats(`inputs/${e.input}.f32`);
    const want = golden.bytes(e.quant_file);
    const wantDq = golden.floats(e.dequant_file);
    const label = `${e.input}.${e.type}`;
    assert.equal(firstDiff(bq.quantize(e.type, x), want), -1, `${label}: quantize differs from ggml`);
    assert.equal(firstDiff(bq.dequantize(e.type, want), wantDq), -1, `${label}: dequantize differs from ggml`);
    assert.equal(firstDiff(oracle.quantize(e.type, x), want), -1, `${label}: oracle quantize`);
    assert.equal(firstDiff(oracle.dequantize(e.type, want), wantDq), -1, `${label}: oracle dequantize`);
  }
});

test(`golden dot products, ${BACKEND} build`, () => {
  assert.equal(golden.manifest.dots.length, 90);
  for (const d of golden.manifest.dots) {
    const pair = [d.x_type, d.y_type];
    const xb = golden.bytes(d.x_file),
      yb = golden.bytes(d.y_file);
    const x = xb.subarray(0, (d.n / 32) * oracle.SIZES[d.x_type][1]);
    const y = yb.subarray(0, (d.n / 32) * oracle.SIZES[d.y_type][1]);
    const label = `${d.dot} ${d.x_input}.${d.y_input} n=${d.n}`;
    const want = new Float32Array(new Uint32Array([Number(d.result_hex)]).buffer)[0];
    const ref = oracle.vecDot(pair, x, y, d.n);
    assert.ok(sameFloat(ref.sum, want), `${label}: oracle ${ref.sum} vs ggml ${want}`);
    const got = bq.dot(d.x_type, x, d.y_type, y);
    if (BACKEND === 'scalar') {
      // The scalar build sums block terms in ggml's order, so it matches to the bit.
      assert.ok(sameFloat(got, want), `${label}: ${got} vs ggml ${want}`);
    }
    assert.ok(Math.abs(got - want) <= 1e-5 * ref.abs, `${label}: ${got} vs ggml ${want} (sum|terms| ${ref.abs})`);
    // One block at a time, the result is that block's term exactly: integer sums are exact.
    const xs = oracle.SIZES[d.x_type][1],
      ys = oracle.SIZES[d.y_type][1];
    for (let b = 0; b < d.n / 32; b++) {
      const t = Math.fround(0 + oracle.blockTerm(pair, x, b * xs, y, b * ys).term); // the sum starts at +0
      const one = bq.dot(d.x_type, x.subarray(b * xs, (b + 1) * xs), d.y_type, y.subarray(b * ys, (b + 1) * ys));
      assert.ok(sameFloat(one, t), `${label} block ${b}: ${one} vs term ${t}`);
    }
  }
});
