// The demo's layout descriptions (demo/layout.js) against the codec: every block format's codes,
// sub-block scales and mins, recombined in ggml's order, give dequantize's values bit for bit, on
// quantized data and on random bytes; the texts the inspector shows are generated from them. The IQ
// grid tables the demo reads out of the codec (demo/grids.js) are checked against ggml's SHA-256.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { LAYOUT_FORMATS, decodeBlock, layoutText, gridOf } from '../demo/layout.js';
import { gridTables } from '../demo/grids.js';
import { CODEC_TYPES, typeInfo } from '../js/index.js';
import { codec, rng, quantizeAny } from './lib/helpers.js';

const bq = await codec();
const grids = gridTables(bq);

test('every block format the codec decodes has a layout description', () => {
  const decodable = CODEC_TYPES.map((id) => typeInfo(id))
    .filter((t) => t.blockSize > 1 && t.dequantize)
    .map((t) => t.name);
  assert.deepEqual([...LAYOUT_FORMATS].sort(), [...decodable].sort());
  assert.equal(decodable.length, 27);
});

// SHA-256 of ggml's tables (ggml-common.h) as little-endian bytes, 8 (IQ3: 4) bytes per row.
const GRID_SHA256 = {
  iq2xxs_grid: '05826b5d3e472a3a78f196be62ac78acf81df0f909626e12ab9fa2a5d490dd54',
  iq2xs_grid: '06e47aaca60b4dc1d9b5a3f34540437058a6b142b4d7a59d5ded769b4d1bf1de',
  iq2s_grid: 'e1aa1473412b0552c2174c30ef22ab4073f6a181b85a17056e8249bd2932fd88',
  iq3xxs_grid: '46e35f5a997efdee6c99ce57854c8a0d4f0ff8ca57e5e8a60c0793ea580acf5d',
  iq3s_grid: 'bd1af4945a1717c65610b0284e4628b9a1ba3b306fae3a06f6e5f597356e349f',
  iq1s_grid: '07540ffc1aeaf6ad4d97e96b0fcc765aae39671d4ae4a27bbd0e796fde167c6a',
};

test("the grid tables read out of the codec are ggml's", () => {
  assert.deepEqual(Object.keys(grids).sort(), Object.keys(GRID_SHA256).sort());
  for (const [name, t] of Object.entries(grids)) {
    const sha = createHash('sha256')
      .update(new Uint8Array(t.buffer, t.byteOffset, t.byteLength))
      .digest('hex');
    assert.equal(sha, GRID_SHA256[name], name);
  }
  for (const f of LAYOUT_FORMATS) if (f.startsWith('iq') && !f.startsWith('iq4')) assert.ok(gridOf(f) in grids, f);
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
      blocks.push(quantizeAny(bq, format, x, blockSize));
    }
    const raw = new Uint8Array(nb * typeSize);
    for (let i = 0; i < raw.length; i++) raw[i] = Math.floor(r.next() * 256);
    blocks.push(raw);
    for (const bytes of blocks) {
      const want = bq.dequantize(format, bytes);
      for (let b = 0; b < nb; b++) {
        const got = decodeBlock(format, bytes.subarray(b * typeSize, (b + 1) * typeSize), grids).values;
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
  assert.match(t('iq4_nl'), /x_e = d · kvalues_iq4nl\[q_e\]/);
  assert.match(
    t('iq4_xs'),
    /sc_j = \(scales_l\[⌊j\/2⌋\] >> 4·\(j mod 2\)\) & 15 \| \(\(scales_h\[⌊j\/4⌋\] >> 2·\(j mod 4\)\) & 3\) << 4, minus 32/,
  );
  assert.match(t('mxfp4'), /x_e = e · kvalues_mxfp4\[q_e\]/);
  assert.match(
    t('tq1_0'),
    /trit ⌊e\/32⌋ of qs\[e mod 32\] for e < 160; trit ⌊\(e − 160\)\/16⌋ of qs\[32 \+ \(e − 160\) mod 16\]/,
  );
  assert.match(t('tq2_0'), /q_e = \(qs\[32·⌊e\/128⌋ \+ e mod 32\] >> 2·⌊\(e mod 128\)\/32⌋\) & 3, minus 1/);
  assert.match(t('nvfp4'), /x_e = ue4m3\(sc_j\) · kvalues_mxfp4\[q_e\],  j = ⌊e\/16⌋/);
  assert.match(t('nvfp4'), /q_e = \(qs\[8·⌊e\/16⌋ \+ e mod 8\] >> 4·⌊\(e mod 16\)\/8⌋\) & 15/);
  assert.match(t('nvfp4'), /sc_j = d\[j\]/);
  assert.match(t('q1_0'), /q_e = \(qs\[⌊e\/8⌋\] >> \(e mod 8\)\) & 1/);
  assert.match(t('q1_0'), /q1_0_sign = -1 1/);
  assert.match(t('q2_0'), /q_e = \(qs\[⌊e\/4⌋\] >> 2·\(e mod 4\)\) & 3, minus 1/);
  assert.match(t('iq2_xxs'), /iq2xxs_grid\[i_k\]/);
  assert.match(t('iq1_m'), /δ_g/);
  assert.match(
    t('q3_K'),
    /sc_j = \(scales\[j mod 8\] >> 4·⌊j\/8⌋\) & 15 \| \(\(scales\[8 \+ j mod 4\] >> 2·⌊j\/4⌋\) & 3\) << 4, minus 32/,
  );
});
