// The demo's layout descriptions (demo/layout.js) against the codec: every block format's codes,
// sub-block scales and mins, recombined in ggml's order, give dequantize's values bit for bit, on
// quantized data and on random bytes; the texts the inspector shows are generated from them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LAYOUT_FORMATS, decodeBlock, layoutText } from '../demo/layout.js';
import { CODEC_TYPES, typeInfo } from '../js/index.js';
import { codec, rng } from './lib/helpers.js';

const bq = await codec();

test('the simple formats and the K-quants have layout descriptions, of formats the codec decodes', () => {
  const decodable = CODEC_TYPES.map((id) => typeInfo(id))
    .filter((t) => t.blockSize > 1 && t.dequantize)
    .map((t) => t.name);
  const want = ['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0', 'q8_1', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K', 'q8_K'];
  assert.deepEqual([...LAYOUT_FORMATS], want);
  for (const f of LAYOUT_FORMATS) assert.ok(decodable.includes(f), f);
});

for (const format of LAYOUT_FORMATS) {
  test(`${format}: values recomputed from the layout equal dequantize, bit for bit`, () => {
    const { blockSize, typeSize, quantize } = typeInfo(format);
    const seed = 0x5eed + typeSize;
    const r = rng(seed);
    const nb = 24;
    const blocks = [];
    if (quantize) {
      const x = new Float32Array(nb * blockSize);
      for (let i = 0; i < x.length; i++) x[i] = r.normal() * (i % 97 === 0 ? 8 : 0.05);
      blocks.push(bq.quantize(format, x));
    }
    const raw = new Uint8Array(nb * typeSize);
    for (let i = 0; i < raw.length; i++) raw[i] = Math.floor(r.next() * 256);
    blocks.push(raw);
    for (const bytes of blocks) {
      const want = bq.dequantize(format, bytes);
      for (let b = 0; b < nb; b++) {
        const got = decodeBlock(format, bytes.subarray(b * typeSize, (b + 1) * typeSize)).values;
        for (let e = 0; e < blockSize; e++) {
          const w = want[b * blockSize + e];
          if (Number.isNaN(w)) assert.ok(Number.isNaN(got[e]), `seed ${seed} block ${b} element ${e}`);
          else assert.ok(Object.is(got[e], w), `seed ${seed} block ${b} element ${e}: ${got[e]} != ${w}`);
        }
      }
    }
  });
}

test('the layout texts say how each format stores its codes', () => {
  const t = (f) => layoutText(f).join('\n');
  assert.match(t('q8_0'), /q_e = qs\[e\] \(as a signed integer\)/);
  assert.doesNotMatch(t('q8_0'), /nibble|& 15/);
  assert.match(t('q4_0'), /q_e = \(qs\[e mod 16\] >> 4·⌊e\/16⌋\) & 15, minus 8/);
  assert.match(t('q5_0'), /\(\(qh\[⌊e\/8⌋\] >> \(e mod 8\)\) & 1\) << 4/);
  assert.match(t('q4_K'), /qs\[32·⌊e\/64⌋ \+ e mod 32\] >> 4·⌊\(e mod 64\)\/32⌋/);
  assert.match(t('q4_K'), /x_e = \(d · sc_j\) · q_e − dmin · m_j/);
  assert.match(t('q6_K'), /ql\[64·⌊e\/128⌋ \+ e mod 64\] >> 4·⌊\(e mod 128\)\/64⌋/);
  assert.match(
    t('q3_K'),
    /sc_j = \(scales\[j mod 8\] >> 4·⌊j\/8⌋\) & 15 \| \(\(scales\[8 \+ j mod 4\] >> 2·⌊j\/4⌋\) & 3\) << 4, minus 32/,
  );
});
