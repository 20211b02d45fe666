// Tensors the reader can list but not read: a ggml type id blockquant does not know (43 and up,
// or a retired id) and Q2_0 stored in the pre-release layout (34 bytes per 128 weights under the
// same id 42). The file still opens (parseGGUF, openGGUF, split shards), every other tensor reads
// normally, what the offsets still allow is checked, and reading or decoding such a tensor throws
// a GGUFError naming it. Files are built byte by byte (tests/lib/gguf-bytes.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGGUF, openGGUF, GGUFError, GGMLType, tensorTypeName } from '../js/node.js';
import { overviewOf } from '../demo/viewer-data.js';
import { main } from '../js/cli.js';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bytes } from './lib/gguf-bytes.js';
import { codec } from './lib/helpers.js';

const bq = await codec();

/**
 * A v3 file: tensors [name, dims, type, offset], then `dataBytes` bytes of data counting 0, 1, 2,
 * ... (mod 251), so every tensor's bytes are known. kv: [key, u32 value] pairs.
 * Returns the bytes, the data section's start and where each tensor's type id field is.
 */
function build(tensors, dataBytes, kv = []) {
  const w = new Bytes().header(3, tensors.length, kv.length);
  for (const [k, v] of kv) w.str(k).u32(4).u32(v);
  const typeAt = [];
  for (const t of tensors) {
    typeAt.push(w.length + 8 + new TextEncoder().encode(t[0]).length + 4 + 8 * t[1].length);
    w.tensor(...t);
  }
  const al = kv.find(([k]) => k === 'general.alignment')?.[1] ?? 32;
  w.padTo(al);
  const dataOffset = w.length;
  for (let i = 0; i < dataBytes; i++) w.u8(i % 251);
  return { bytes: w.bytes(), dataOffset, typeAt };
}

/** The data bytes a tensor at `offset` of `n` bytes holds in a build() file. */
const expectBytes = (offset, n) => Uint8Array.from({ length: n }, (_, i) => (offset + i) % 251);

/** Asserts fn throws (or rejects with) a GGUFError of `code` whose message names `what`. */
async function refusesWith(fn, code, what, where) {
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof GGUFError, `${where}: expected a GGUFError, got ${err}`);
  assert.equal(err.code, code, `${where}: ${err.message}`);
  for (const w of what) assert.ok(err.message.includes(w), `${where}: "${err.message}" names ${w}`);
  return err;
}

/** parseGGUF refuses with code. */
function refuses(bytes, code, where) {
  assert.throws(
    () => parseGGUF(bytes),
    (e) => e instanceof GGUFError && e.code === code,
    where,
  );
}

const UNKNOWN_IDS = [4, 5, 31, 32, 33, 36, 37, 38, 43, 44, 255, 1000, 2 ** 31, 2 ** 32 - 1];

test('a tensor of an unknown or retired type id is listed; the others read; reading it throws naming the id', async () => {
  for (const id of UNKNOWN_IDS) {
    // a: F32 x8 at 0 (32 bytes); u: the unknown one, 768 elements, at 32; b: Q8_0 32x2 (68 bytes)
    // at 128, leaving the unknown tensor 96 bytes; the file ends 4 bytes after b.
    const f = build(
      [
        ['a', [8], GGMLType.F32, 0],
        ['u', [256, 3], id, 32],
        ['b', [32, 2], GGMLType.Q8_0, 128],
      ],
      200,
    );
    const where = `type ${id}`;
    const g = parseGGUF(f.bytes);
    assert.equal(g.tensors.length, 3, where);
    const u = g.tensors[1];
    assert.equal(u.type, id, where);
    assert.deepEqual(u.dims, [256, 3], where);
    assert.equal(u.nElements, 768, where);
    assert.equal(u.offset, 32, where);
    assert.equal(u.byteLength, null, where);
    assert.equal(u.layout, undefined, where);
    assert.equal(u.unreadable.code, 'UNKNOWN_GGML_TYPE', where);
    assert.equal(u.unreadable.offset, f.typeAt[1], where);
    assert.equal(tensorTypeName(u), `unknown(${id})`, where);
    assert.equal(tensorTypeName(g.tensors[2]), 'q8_0', where);
    // The known tensors are exactly as in any file.
    assert.deepEqual(g.tensors[0], { name: 'a', type: 0, dims: [8], offset: 0, nElements: 8, byteLength: 32 });
    assert.deepEqual(g.tensors[2], { name: 'b', type: 8, dims: [32, 2], offset: 128, nElements: 64, byteLength: 68 });
    assert.deepEqual(g.tensorBytes('a'), expectBytes(0, 32), where);
    assert.deepEqual(g.tensorBytes('b'), expectBytes(128, 68), where);
    const named = ['u:', `type ${id}`];
    const e = await refusesWith(() => g.tensorBytes('u'), 'UNKNOWN_GGML_TYPE', named, `${where} tensorBytes`);
    assert.equal(e.offset, f.typeAt[1]);

    // The same through openGGUF (a Blob and a custom source), and the codec's decoders.
    for (const src of [new Blob([f.bytes]), { size: f.bytes.length, read: async (o, n) => f.bytes.slice(o, o + n) }]) {
      const h = await openGGUF(src);
      assert.equal(h.tensors[1].byteLength, null, where);
      assert.deepEqual(await h.readTensor('b'), expectBytes(128, 68), where);
      assert.deepEqual(await h.readRows('b', 1, 1), expectBytes(128 + 34, 34), where);
      await refusesWith(() => h.readTensor('u'), 'UNKNOWN_GGML_TYPE', named, `${where} readTensor`);
      await refusesWith(() => h.readRows('u', 0, 1), 'UNKNOWN_GGML_TYPE', named, `${where} readRows`);
      await refusesWith(() => bq.dequantizeTensor(h, 'u'), 'UNKNOWN_GGML_TYPE', named, `${where} dequantizeTensor`);
      await refusesWith(() => bq.dequantizeRows(h, 'u', 0, 1), 'UNKNOWN_GGML_TYPE', named, `${where} dequantizeRows`);
      await refusesWith(() => bq.loadTensor(h, 'u'), 'UNKNOWN_GGML_TYPE', named, `${where} loadTensor`);
      const want = bq.dequantize('q8_0', expectBytes(128, 68));
      assert.deepEqual(await bq.dequantizeTensor(h, 'b'), want, where);
      const W = await bq.loadTensor(h, 'b');
      assert.deepEqual(bq.dequantize(W), want, where);
      W.dispose();
    }
    // Through parseGGUF's result too.
    await refusesWith(() => bq.dequantizeTensor(g, 'u'), 'UNKNOWN_GGML_TYPE', named, `${where} parsed`);
  }
});

test('around a tensor of unknown size the reader still checks what it can', () => {
  const U = 77;
  // It must start where the previous tensor ends.
  refuses(
    build(
      [
        ['a', [8], 0, 0],
        ['u', [64], U, 64],
      ],
      200,
    ).bytes,
    'BAD_OFFSET',
    'unknown not packed',
  );
  // The next tensor must start after it (one alignment step at least, as it has elements) and aligned.
  for (const [off, ok] of [
    [32, false],
    [48, false],
    [64, true],
    [96, true],
  ]) {
    const f = build(
      [
        ['a', [8], 0, 0],
        ['u', [64], U, 32],
        ['b', [4], 0, off],
      ],
      200,
    );
    if (ok) assert.equal(parseGGUF(f.bytes).tensors[2].offset, off);
    else refuses(f.bytes, 'BAD_OFFSET', `next at ${off}`);
  }
  // With no elements it may take no bytes at all.
  assert.equal(
    parseGGUF(
      build(
        [
          ['u', [0, 4], U, 0],
          ['b', [4], 0, 0],
        ],
        16,
      ).bytes,
    ).tensors[1].byteLength,
    16,
  );
  // Two unknown tensors in a row, then a known one: each bounded by the next.
  const two = parseGGUF(
    build(
      [
        ['u1', [64], U, 0],
        ['u2', [64], U + 1, 64],
        ['b', [4], 0, 128],
      ],
      144,
    ).bytes,
  );
  assert.deepEqual(
    two.tensors.map((t) => t.byteLength),
    [null, null, 16],
  );
  assert.deepEqual(two.tensorBytes('b'), expectBytes(128, 16));
  // A known tensor after it must still fit in the file.
  refuses(
    build(
      [
        ['u', [64], U, 0],
        ['b', [64], 0, 64],
      ],
      64 + 255,
    ).bytes,
    'BAD_OFFSET',
    'known after unknown past the end',
  );
  // Its own start must lie inside the data section, with at least its first byte there.
  const after = (dims, offset, dataBytes) =>
    build(
      [
        ['a', [16], 0, 0],
        ['u', dims, U, offset],
      ],
      dataBytes,
    ).bytes;
  refuses(after([64], 64, 64), 'BAD_OFFSET', 'unknown at the end');
  assert.equal(parseGGUF(after([64], 64, 65)).tensors[1].offset, 64);
  assert.equal(parseGGUF(after([0], 64, 64)).tensors[1].nElements, 0);
  refuses(after([0], 64, 63), 'BAD_OFFSET', 'unknown past the end');
  refuses(build([['u', [64], U, 2 ** 63]], 64).bytes, 'BAD_OFFSET', 'unknown far past the end');
  refuses(
    build(
      [
        ['u', [64], U, 0],
        ['b', [4], 0, 2 ** 62],
      ],
      64,
    ).bytes,
    'BAD_OFFSET',
    'next far past the end',
  );
  // Its shape is still validated: dims, overflow.
  refuses(build([['u', [2 ** 62, 4], U, 0]], 64).bytes, 'OVERFLOW', 'overflow');
  refuses(build([['u', [1, 1, 1, 1, 1], U, 0]], 64).bytes, 'BAD_DIMS', 'dims');
});

test('split shards: a tensor of unknown type in one shard is listed, the rest read', async () => {
  const kv = (no) => [
    ['split.no', no],
    ['split.count', 2],
    ['split.tensors.count', 3],
  ];
  const s1 = build([['a', [8], 0, 0]], 32, kv(0));
  const s2 = build(
    [
      ['u', [128], 99, 0],
      ['b', [32], GGMLType.Q8_0, 64],
    ],
    98,
    kv(1),
  );
  const f = await openGGUF([new Blob([s1.bytes]), new Blob([s2.bytes])]);
  assert.deepEqual(
    f.tensors.map((t) => [t.name, t.shard, t.byteLength]),
    [
      ['a', 0, 32],
      ['u', 1, null],
      ['b', 1, 34],
    ],
  );
  assert.equal(f.tensors[1].unreadable.offset, s2.typeAt[0]);
  assert.deepEqual(await f.readTensor('b'), expectBytes(64, 34));
  assert.deepEqual(await f.readTensor('a'), expectBytes(0, 32));
  await refusesWith(() => f.readTensor('u'), 'UNKNOWN_GGML_TYPE', ['u', 'type 99'], 'shard');
  await refusesWith(() => bq.dequantizeTensor(f, 'u'), 'UNKNOWN_GGML_TYPE', ['type 99'], 'shard decode');
});

test('Q2_0 in the pre-release layout (34 bytes per 128 weights) is listed as such and not decoded', async () => {
  // 2048 weights: mainline 32 blocks x 18 = 576 bytes, pre-release 16 groups x 34 = 544 (both
  // multiples of 32, so the next offset tells them apart).
  const q = (dims, next, dataBytes, kv = []) =>
    build(
      [
        ['q', dims, GGMLType.Q2_0, 0],
        ['f', [4], GGMLType.F32, next],
      ],
      dataBytes ?? next + 16,
      kv,
    );
  const old = q([512, 4], 544);
  const g = parseGGUF(old.bytes);
  const t = g.tensors[0];
  assert.equal(t.layout, 'q2_0-prerelease');
  assert.equal(t.byteLength, 544);
  assert.equal(t.type, 42);
  assert.equal(t.unreadable.code, 'PRERELEASE_Q2_0');
  assert.equal(t.unreadable.offset, old.typeAt[0]);
  assert.equal(tensorTypeName(t), 'q2_0-prerelease');
  assert.deepEqual(g.tensorBytes('f'), expectBytes(544, 16));
  const what = ['q', 'pre-release', '128', '34 bytes'];
  await refusesWith(() => g.tensorBytes('q'), 'PRERELEASE_Q2_0', what, 'tensorBytes');
  await refusesWith(() => bq.dequantizeTensor(g, 'q'), 'PRERELEASE_Q2_0', what, 'dequantizeTensor');
  const h = await openGGUF(new Blob([old.bytes]));
  assert.equal(h.tensors[0].layout, 'q2_0-prerelease');
  await refusesWith(() => h.readTensor('q'), 'PRERELEASE_Q2_0', what, 'readTensor');
  await refusesWith(() => h.readRows('q', 0, 1), 'PRERELEASE_Q2_0', what, 'readRows');
  await refusesWith(() => bq.dequantizeRows(h, 'q', 0, 1), 'PRERELEASE_Q2_0', what, 'dequantizeRows');
  await refusesWith(() => bq.loadTensor(h, 'q'), 'PRERELEASE_Q2_0', what, 'loadTensor');

  // Mainline: the next tensor 576 bytes on; the raw bytes read as usual.
  const main = parseGGUF(q([512, 4], 576).bytes);
  assert.equal(main.tensors[0].layout, undefined);
  assert.equal(main.tensors[0].unreadable, undefined);
  assert.equal(main.tensors[0].byteLength, 576);
  assert.deepEqual(main.tensorBytes('q'), expectBytes(0, 576));
  // Neither layout: refused, as any misplaced tensor.
  refuses(q([512, 4], 560).bytes, 'BAD_OFFSET', 'neither');
  refuses(q([512, 4], 512).bytes, 'BAD_OFFSET', 'shorter than both');
  // Rows of 64 are not whole 128-weight groups: only mainline can fit.
  refuses(q([64, 32], 544).bytes, 'BAD_OFFSET', 'rows of 64');
  assert.equal(parseGGUF(q([64, 32], 576).bytes).tensors[0].byteLength, 576);
  // Where padding hides the difference (128 weights: 36 or 34 bytes, both padded to 32... 64), mainline.
  const small = parseGGUF(q([128, 1], 64).bytes).tensors[0];
  assert.equal(small.layout, undefined);
  assert.equal(small.byteLength, 36);
  // With alignment 1 the two differ for any size: 34 bytes is pre-release, 36 mainline.
  const a1 = [['general.alignment', 1]];
  assert.equal(parseGGUF(q([128, 1], 34, 50, a1).bytes).tensors[0].layout, 'q2_0-prerelease');
  assert.equal(parseGGUF(q([128, 1], 36, 52, a1).bytes).tensors[0].layout, undefined);
  refuses(q([128, 1], 35, 51, a1).bytes, 'BAD_OFFSET', 'alignment 1, 35 bytes');
});

test('a pre-release Q2_0 tensor last in the file is told by the file end', async () => {
  const last = (dataBytes, dims = [512, 4]) =>
    build(
      [
        ['f', [4], GGMLType.F32, 0],
        ['q', dims, GGMLType.Q2_0, 32],
      ],
      32 + dataBytes,
    ).bytes;
  const layout = (b) => parseGGUF(b).tensors[1].layout;
  assert.equal(layout(last(544)), 'q2_0-prerelease'); // exactly the pre-release size
  assert.equal(layout(last(576)), undefined); // exactly mainline
  assert.equal(layout(last(600)), undefined); // mainline with bytes after it
  refuses(last(550), 'BAD_OFFSET', 'past the pre-release padding, short of mainline');
  refuses(last(543), 'BAD_OFFSET', 'short of both');
  refuses(last(544, [64, 32]), 'BAD_OFFSET', 'rows of 64 cannot be pre-release');
  // Padding after the last tensor (as ggml writes it) is part of its extent.
  const padded = build(
    [
      ['f', [4], GGMLType.F32, 0],
      ['q', [128, 3], GGMLType.Q2_0, 32],
    ],
    32 + 128,
  ).bytes; // pre-release 102 bytes padded to 128; mainline 108 fits too: mainline
  assert.equal(layout(padded), undefined);
  const padOnly = build(
    [
      ['f', [4], GGMLType.F32, 0],
      ['q', [128, 3], GGMLType.Q2_0, 32],
    ],
    32 + 104,
  ).bytes; // 104 bytes: pre-release 102 plus 2 of padding, short of mainline's 108
  assert.equal(layout(padOnly), 'q2_0-prerelease');
  const h = await openGGUF(new Blob([last(544)]));
  await refusesWith(() => h.readTensor('q'), 'PRERELEASE_Q2_0', ['q'], 'last readTensor');
  assert.deepEqual(await h.readTensor('f'), expectBytes(0, 16));
});

test('the demo overview counts a tensor of unknown size but not its bytes', () => {
  const g = parseGGUF(
    build(
      [
        ['a', [8], 0, 0],
        ['blk.0.u', [256, 3], 44, 32],
        ['blk.0.b', [32, 2], GGMLType.Q8_0, 128],
      ],
      200,
    ).bytes,
  );
  const o = overviewOf(g);
  assert.equal(o.tensors, 3);
  assert.equal(o.params, 8 + 768 + 64);
  assert.equal(o.bytes, 32 + 68);
  assert.equal(o.unsized, 1);
  assert.equal(o.bitsPerWeight, (8 * 100) / 72);
  assert.deepEqual(
    o.byType.find((r) => r.type === 'unknown(44)'),
    { type: 'unknown(44)', tensors: 1, params: 768, bytes: 0 },
  );
});

test('the CLI lists a tensor of unknown type as unknown(N), skips it, and refuses to read or convert it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bq-unknown-'));
  try {
    const path = join(dir, 'u.gguf');
    writeFileSync(
      path,
      build(
        [
          ['a', [32, 2], 0, 0],
          ['blk.0.u', [256, 3], 44, 256],
          ['q', [512, 4], GGMLType.Q2_0, 512],
          ['b', [32, 2], GGMLType.Q8_0, 1056],
        ],
        1056 + 68,
      ).bytes,
    );
    const run = async (...args) => {
      let out = '',
        err = '';
      const code = await main(args, { out: { write: (x) => (out += x) }, err: { write: (x) => (err += x) } });
      return { code, out, err };
    };
    const r = await run('inspect', path);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /blk\.0\.u\s+unknown\(44\)\s+\[256, 3\]\s+\?\s+256/);
    assert.match(r.out, /q\s+q2_0-prerelease\s+\[512, 4\]\s+544\s+512/);
    assert.match(r.out, /unknown\(44\)\s+1 tensors, 768 elements, \? bytes/);
    assert.match(r.out, /not readable:\n {2}blk\.0\.u: ggml type 44 /);
    const j = JSON.parse((await run('inspect', '--json', path)).out);
    assert.deepEqual(
      j.tensors.map((t) => [t.name, t.type, t.bytes]),
      [
        ['a', 'f32', 256],
        ['blk.0.u', 'unknown(44)', null],
        ['q', 'q2_0-prerelease', 544],
        ['b', 'q8_0', 68],
      ],
    );
    assert.match(j.tensors[1].unreadable, /type 44/);
    // stats takes the float tensors only; dump of another tensor works; of the unknown one fails.
    const st = await run('stats', path, '--as', 'q8_0');
    assert.equal(st.code, 0, st.err);
    assert.match(st.out, /^a\s+q8_0/m);
    const d = await run('dump', path, 'b', '--rows', '0:1');
    assert.equal(d.code, 0, d.err);
    const du = await run('dump', path, 'blk.0.u');
    assert.equal(du.code, 1);
    assert.match(du.err, /ggml type 44/);
    const dq = await run('dump', path, 'q');
    assert.equal(dq.code, 1);
    assert.match(dq.err, /pre-release/);
    const qz = await run('quantize', path, join(dir, 'out.gguf'), '--type', 'q8_0');
    assert.equal(qz.code, 1);
    assert.match(qz.err, /ggml type 44/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
