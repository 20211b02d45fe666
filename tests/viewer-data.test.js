// The model viewer's numbers (demo/viewer-data.js) against sums written out here over parseGGUF's
// tensors and the fixture's own constants: totals, per type and per layer breakdowns, the KV-cache
// estimate (and which keys it read, and what it says when keys are missing), metadata rows and
// array pages, the vocabulary search, byte tokens and UTF-8, and split-model shard names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGGUF, typeInfo, openGGUF, writeGGUF, GGMLType, GGUFValueType as VT } from '../js/node.js';
import {
  overviewOf,
  kvCacheBytes,
  metaRows,
  metaArrayPage,
  vocabOf,
  searchVocab,
  tokenText,
  shardNames,
} from '../demo/viewer-data.js';
import { codec } from './lib/helpers.js';
import { viewerModel, vocabTokens, ARCH, TEMPLATE } from './lib/viewer-fixture.js';

const bq = await codec();
const [bytes] = viewerModel(bq);
const g = parseGGUF(bytes);

test('overview totals equal the sums over the tensors', () => {
  const o = overviewOf(g);
  let params = 0,
    size = 0;
  for (const t of g.tensors) {
    const n = t.dims.reduce((a, b) => a * b, 1);
    const { blockSize, typeSize } = typeInfo(t.type);
    params += n;
    size += (n / blockSize) * typeSize;
  }
  assert.equal(o.arch, 'llama');
  assert.equal(o.name, 'Viewer Fixture 3L');
  assert.equal(o.tensors, 3 * 5 + 3);
  assert.equal(o.params, params);
  assert.equal(o.bytes, size);
  assert.equal(o.bitsPerWeight, (8 * size) / params);
  // Per type and per layer, each part sums to the total and matches its own tensors.
  assert.equal(
    o.byType.reduce((a, r) => a + r.bytes, 0),
    size,
  );
  const q4k = g.tensors.filter((t) => t.type === GGMLType.Q4_K);
  assert.deepEqual(
    o.byType.find((r) => r.type === 'q4_K'),
    {
      type: 'q4_K',
      tensors: q4k.length,
      params: q4k.reduce((a, t) => a + t.nElements, 0),
      bytes: q4k.reduce((a, t) => a + (t.nElements / 256) * 144, 0),
    },
  );
  assert.deepEqual(
    o.byLayer.map((r) => r.layer),
    [-1, 0, 1, 2],
  );
  const l1 = g.tensors.filter((t) => t.name.startsWith('blk.1.'));
  assert.equal(
    o.byLayer[2].params,
    l1.reduce((a, t) => a + t.nElements, 0),
  );
  assert.equal(o.byLayer[0].tensors, 3);
});

test('KV cache: layers × ctx × (head_count_kv × key_length) × 2 for K and V × 2 bytes', () => {
  const o = overviewOf(g);
  const { layers, embd, heads, kvHeads, ctx } = ARCH;
  const perLayer = 2 * kvHeads * (embd / heads); // K and V, key_length = embd / heads
  assert.equal(kvCacheBytes(o.kv, ctx), layers * ctx * perLayer * 2);
  assert.equal(kvCacheBytes(o.kv, 100), layers * 100 * perLayer * 2);
  assert.equal(o.kv.contextLength, ctx);
  assert.ok(o.kv.used.includes('llama.attention.head_count_kv'));
  assert.ok(o.kv.used.includes('llama.embedding_length'));
  assert.deepEqual(o.kv.missing, []);
  // Explicit key_length / value_length and a per-layer head_count_kv array.
  const kv2 = [
    { key: 'general.architecture', type: VT.STRING, value: 'x' },
    { key: 'x.block_count', type: VT.UINT32, value: 2 },
    { key: 'x.attention.head_count', type: VT.UINT32, value: 8 },
    { key: 'x.attention.head_count_kv', type: VT.ARRAY, itemType: VT.INT32, value: [1, 3] },
    { key: 'x.attention.key_length', type: VT.UINT32, value: 64 },
    { key: 'x.attention.value_length', type: VT.UINT32, value: 32 },
  ];
  const o2 = overviewOf(parseGGUF(writeGGUF({ kv: kv2, tensors: [] })));
  assert.equal(kvCacheBytes(o2.kv, 10), 10 * (1 * 96 + 3 * 96) * 2);
  assert.equal(o2.kv.contextLength, null);
  // Missing keys: no estimate, and the missing keys are named.
  const o3 = overviewOf(parseGGUF(writeGGUF({ kv: kv2.slice(0, 2), tensors: [] })));
  assert.equal(kvCacheBytes(o3.kv, 10), null);
  assert.ok(o3.kv.missing.some((m) => m.includes('x.attention.head_count_kv')));
  const o4 = overviewOf(parseGGUF(writeGGUF({ kv: [], tensors: [] })));
  assert.deepEqual(o4.kv.missing.slice(0, 1), ['general.architecture']);
  assert.equal(o4.bitsPerWeight, 0);
});

test('metadata rows carry types and lengths; arrays page; search filters', () => {
  const rows = metaRows(g.kv);
  const tok = rows.find((r) => r.key === 'tokenizer.ggml.tokens');
  assert.equal(tok?.type, 'array<string>');
  assert.equal(tok?.length, vocabTokens().length);
  assert.equal(rows.find((r) => r.key === 'llama.block_count')?.type, 'u32');
  assert.equal(rows.find((r) => r.key === 'tokenizer.chat_template')?.length, TEMPLATE.length);
  assert.deepEqual(
    metaRows(g.kv, 'HEAD_COUNT').map((r) => r.key),
    ['llama.attention.head_count', 'llama.attention.head_count_kv'],
  );
  const p = metaArrayPage(g.kv, 'tokenizer.ggml.tokens', 259, 3);
  assert.deepEqual(p, {
    key: 'tokenizer.ggml.tokens',
    length: vocabTokens().length,
    offset: 259,
    items: ['"▁the"', '"▁model"', '"▁héllo"'],
  });
  assert.equal(metaArrayPage(g.kv, 'tokenizer.ggml.tokens', 1e9, 5).items.length, 0);
  assert.throws(() => metaArrayPage(g.kv, 'general.name', 0, 5), RangeError);
});

test('vocabulary: search by text and id, byte tokens as bytes, UTF-8 hex', () => {
  const v = vocabOf(g.kv);
  const tokens = vocabTokens();
  assert.equal(v.tokens.length, tokens.length);
  assert.deepEqual([...searchVocab(v.tokens, '日本')], [tokens.indexOf('日本語')]);
  // '▁' matches a typed space; an exact match comes first.
  assert.equal(searchVocab(v.tokens, ' quant')[0], tokens.indexOf('▁quant'));
  assert.deepEqual([...searchVocab(v.tokens, '#13')].slice(0, 1), [13]);
  const expectW1 = tokens.flatMap((t, i) => (t.includes('w1') ? [i] : []));
  assert.deepEqual([...searchVocab(v.tokens, 'w1')], expectW1);
  assert.equal(searchVocab(v.tokens, '').length, tokens.length);
  assert.deepEqual(tokenText('<0x0A>'), { shown: 'byte 0x0A', hex: '0a', byte: true });
  assert.deepEqual(tokenText('▁🦙'), { shown: '▁🦙', hex: 'e2 96 81 f0 9f a6 99', byte: false });
  assert.equal(tokenText('tab\there').shown, 'tab\\u0009here');
});

test('split models: shard names from the first, and openGGUF over the shards sees one model', async () => {
  assert.deepEqual(shardNames('http://h/m/x-00001-of-00003.gguf'), [
    'http://h/m/x-00001-of-00003.gguf',
    'http://h/m/x-00002-of-00003.gguf',
    'http://h/m/x-00003-of-00003.gguf',
  ]);
  assert.equal(shardNames('model.gguf'), null);
  const parts = viewerModel(bq, 3);
  const f = await openGGUF(parts);
  const o = overviewOf(f);
  assert.equal(o.params, overviewOf(g).params);
  assert.equal(o.bytes, overviewOf(g).bytes);
  assert.equal(o.arch, 'llama');
});

test('deep links: read and written back, other parameters kept, a bad block ignored', async () => {
  const { readLink, linkFor, sameFiles } = await import('../demo/links.js');
  const base = 'http://h/demo/?backend=scalar';
  const v = {
    urls: ['a-00001-of-00002.gguf', 'a-00002-of-00002.gguf'],
    files: [],
    tensor: 'blk.0.x',
    format: 'q4_K',
    scale: 'log',
    block: 7,
  };
  const href = linkFor(base, v);
  assert.equal(new URL(href).searchParams.get('backend'), 'scalar');
  assert.deepEqual(readLink(href), { ...v, blockText: '7', compare: null });
  // A bad block is no block, and its text is kept to be reported.
  assert.deepEqual(
    [readLink('http://h/?tensor=t&block=-1').block, readLink('http://h/?tensor=t&block=-1').blockText],
    [null, '-1'],
  );
  assert.equal(readLink('http://h/?tensor=t&block=1e3').block, null);
  assert.deepEqual(readLink('http://h/?url=').urls, []);
  // No tensor: no format or block either; the linear scale (the default) is not written.
  assert.equal(linkFor(base, { urls: [], files: [], tensor: null, format: 'q4_0', scale: 'linear', block: 3 }), base);
  // A local file is named by file= (one per shard); a URL wins over a name; other keys are kept.
  const local = linkFor(`${base}&compare=x.gguf`, {
    ...v,
    urls: [],
    files: ['m-00001-of-00002.gguf', 'm-00002-of-00002.gguf'],
  });
  assert.deepEqual(new URL(local).searchParams.getAll('file'), ['m-00001-of-00002.gguf', 'm-00002-of-00002.gguf']);
  assert.equal(new URL(local).searchParams.get('compare'), 'x.gguf');
  // compare= (the compare panel's) is read, and kept by linkFor, whatever the view.
  assert.equal(readLink(local).compare, 'x.gguf');
  assert.equal(readLink(`${base}&compare=quantize:Q4_K_M`).compare, 'quantize:Q4_K_M');
  assert.deepEqual(new URL(linkFor(base, { ...v, files: ['m.gguf'] })).searchParams.getAll('file'), []);
  assert.equal(sameFiles(['b.gguf', 'a.gguf'], ['a.gguf', 'b.gguf']), true);
  assert.equal(sameFiles(['a.gguf'], ['a.gguf', 'b.gguf']), false);
});

test('the first tensor shown: the first 2-D weight, not a 1-D norm; file types by name', async () => {
  const { firstTensor, fileTypeOf } = await import('../demo/viewer-data.js');
  const t = (/** @type {string} */ name, /** @type {number[]} */ dims, unsupported = '') => ({
    name,
    dims,
    unsupported,
  });
  assert.equal(
    firstTensor([t('blk.0.attn_norm.weight', [256]), t('rope_freqs', [64, 1]), t('blk.0.attn_q.weight', [256, 256])]),
    'blk.0.attn_q.weight',
  );
  // ggml counts [256, 1] as 1-D; a tensor the page cannot analyse is passed over.
  assert.equal(firstTensor([t('a.weight', [256, 1]), t('b.weight', [30, 4], 'no'), t('c.bias', [256, 4])]), 'c.bias');
  assert.equal(firstTensor([t('a.weight', [256])]), 'a.weight');
  assert.equal(firstTensor([]), null);
  // llama.h: 15 is LLAMA_FTYPE_MOSTLY_Q4_K_M, 1 MOSTLY_F16, 0 ALL_F32; 4 is a retired id.
  assert.deepEqual([15, 1, 0, 4, undefined].map(fileTypeOf), ['Q4_K_M', 'F16', 'F32', 'file type 4', '']);
});
