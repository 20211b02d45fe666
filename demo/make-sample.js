#!/usr/bin/env node
// Writes demo/sample.gguf, the demo's bundled model: synthetic F16 and F32 weight tensors shaped
// and distributed like an LLM's (see sample.js), a norm vector, and the same weights stored in
// each of Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and the K-quants Q2_K..Q6_K (rows of 1024 = 4 super-blocks),
// and one tensor in a type blockquant cannot decode (I8) to show how the page explains it. Deterministic.
import { writeFileSync } from 'node:fs';
import { init, writeGGUF, GGMLType, GGUFValueType as VT } from '../js/node.js';
import { syntheticWeights } from './sample.js';

const bq = await init();
const q = syntheticWeights(96, 1024, 11); // an attention projection: 96 rows of 1024
const up = syntheticWeights(128, 1024, 12); // a feed-forward matrix
const norm = new Float32Array(1024).map((_, i) => 1 + 0.1 * Math.sin(i));
const f32 = (x) => new Uint8Array(x.buffer.slice(0));
const tensors = [
  { name: 'blk.0.attn_q.weight', type: GGMLType.F16, dims: [1024, 96], data: bq.quantize('f16', q) },
  { name: 'blk.0.ffn_up.weight', type: GGMLType.F32, dims: [1024, 128], data: f32(up) },
  { name: 'blk.0.attn_norm.weight', type: GGMLType.F32, dims: [1024], data: f32(norm) },
];
for (const t of ['q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K']) {
  tensors.push({
    name: `${t}.blk.0.attn_q.weight`,
    type: GGMLType[t.toUpperCase()],
    dims: [1024, 96],
    data: bq.quantize(t, q),
  });
  tensors.push({
    name: `${t}.blk.0.ffn_up.weight`,
    type: GGMLType[t.toUpperCase()],
    dims: [1024, 128],
    data: bq.quantize(t, up),
  });
}
// I8: the demo lists it but blockquant has no decoder for it.
tensors.push({ name: 'i8.blk.0.attn_k.weight', type: GGMLType.I8, dims: [256, 4], data: new Uint8Array(1024).fill(3) });
const out = new URL('./sample.gguf', import.meta.url);
writeFileSync(
  out,
  writeGGUF({
    kv: [
      { key: 'general.architecture', type: VT.STRING, value: 'synthetic' },
      { key: 'general.name', type: VT.STRING, value: 'blockquant synthetic sample (not a real model)' },
      {
        key: 'general.description',
        type: VT.STRING,
        value: 'Synthetic weights: per-row scale spread, Student-t tails, outlier input channels.',
      },
    ],
    tensors,
  }),
);
console.log(`wrote ${out.pathname}`);
