// Byte sources behind openGGUF: every read returns exactly the bytes asked or fails with a
// GGUFError; options and arguments are validated; the header is read incrementally; split
// shards keep their own byte order; Node files that change after open are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, open, rm, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGGUF, parseGGUF, writeGGUF, GGUFError, GGMLType, GGUFValueType as VT } from '../js/node.js';
import { codec } from './lib/helpers.js';
import { sample, shard, q8Rows } from './lib/source-fixtures.js';

const T = { timeout: 20000 }; // a hang fails the test instead of the whole run

/** @param {string} code */
const gguf = (code) => (/** @type {any} */ e) => e instanceof GGUFError && e.code === code;

/** A custom source over `bytes` whose reads go through `tweak`. */
function custom(bytes, tweak = (/** @type {Uint8Array} */ b, /** @type {number} */ o) => b) {
  const s = { size: bytes.length, reads: 0, bytesRead: 0, name: 'custom', armed: false };
  return Object.assign(s, {
    read: async (/** @type {number} */ o, /** @type {number} */ n) => {
      s.reads++;
      s.bytesRead += n;
      const b = bytes.slice(o, o + n);
      return s.armed ? tweak(b, o) : b;
    },
  });
}

test('a source returning fewer or more bytes than asked is a GGUFError, never short or long data', T, async () => {
  const bq = await codec();
  const { bytes } = sample();
  const short = custom(bytes, (b) => b.subarray(0, b.length - 1));
  const f = await openGGUF(short);
  short.armed = true;
  await assert.rejects(f.readTensor('w'), gguf('SHORT_READ'));
  await assert.rejects(bq.dequantizeTensor(f, 'w'), gguf('SHORT_READ'));
  const long = custom(bytes, (b, o) => bytes.slice(o, o + b.length + 68));
  const g = await openGGUF(long);
  long.armed = true;
  await assert.rejects(g.readRows('w', 0, 1), gguf('LONG_READ'));
  await assert.rejects(bq.dequantizeRows(g, 'w', 0, 1), gguf('LONG_READ'));
  // Short during the header read too.
  const early = custom(bytes, (b) => b.subarray(0, 10));
  early.armed = true;
  await assert.rejects(openGGUF(early), gguf('SHORT_READ'));
});

test('a source must return an ArrayBufferView; other views are read at their byteOffset', T, async () => {
  const { bytes } = sample();
  const want = parseGGUF(bytes).tensorBytes('w');
  for (const bad of [(b) => Array.from(b), (b) => b.buffer, () => null, () => 'GGUF', (b) => ({ length: b.length })]) {
    const s = custom(bytes, bad);
    s.armed = true;
    await assert.rejects(openGGUF(s), gguf('BAD_READ'));
  }
  // A DataView into a larger buffer, at an offset.
  const dv = custom(bytes, (b) => {
    const big = new Uint8Array(b.length + 100).fill(0xee);
    big.set(b, 50);
    return new DataView(big.buffer, 50, b.length);
  });
  dv.armed = true;
  assert.deepEqual(await (await openGGUF(dv)).readTensor('w'), want);
});

test('a source that throws is a GGUFError with the original error as cause', T, async () => {
  const { bytes } = sample();
  const boom = new Error('disk on fire');
  const s = custom(bytes, () => {
    throw boom;
  });
  const f = await openGGUF(s);
  s.armed = true;
  await assert.rejects(f.readTensor('w'), (e) => gguf('READ')(e) && /** @type {any} */ (e).cause === boom);
});

test('buffer sources: any ArrayBufferView is read at its own byteOffset', T, async () => {
  const { bytes } = sample();
  const want = parseGGUF(bytes).tensorBytes('w');
  const at = (/** @type {number} */ off) => {
    const big = new Uint8Array(bytes.length + off + 8).fill(0xaa);
    big.set(bytes, off);
    return big.buffer;
  };
  const pooled = Buffer.from(bytes);
  assert.ok(pooled.byteOffset > 0 || pooled.buffer.byteLength > pooled.length, 'a pooled Buffer');
  const views = [
    pooled,
    new DataView(at(40), 40, bytes.length),
    new Uint8Array(at(7), 7, bytes.length),
    new Uint16Array(at(64), 64, bytes.length / 2),
  ];
  for (const v of views) {
    const f = await openGGUF(v);
    assert.deepEqual(await f.readTensor('w'), want, v.constructor.name);
  }
});

test('source size must be a finite non-negative safe integer', T, async () => {
  const { bytes } = sample();
  const read = async (/** @type {number} */ o, /** @type {number} */ n) => bytes.slice(o, o + n);
  for (const size of [NaN, -1, 1.5, Infinity, 2 ** 53]) await assert.rejects(openGGUF({ size, read }), RangeError);
  for (const size of ['100', undefined, null, 10n])
    await assert.rejects(openGGUF(/** @type {any} */ ({ size, read })), TypeError);
  await assert.rejects(openGGUF(/** @type {any} */ ({ size: bytes.length, read: 'no' })), TypeError);
});

test('numeric options and readRows arguments are validated', T, async () => {
  const { bytes } = sample();
  for (const maxHeaderBytes of [NaN, -1, 0, 1.5, Infinity])
    await assert.rejects(openGGUF(new Blob([bytes]), { maxHeaderBytes }), RangeError);
  await assert.rejects(openGGUF(new Blob([bytes]), /** @type {any} */ ({ maxHeaderBytes: '1' })), TypeError);
  await assert.rejects(openGGUF(bytes, /** @type {any} */ ({ signal: {} })), TypeError);
  const f = await openGGUF(bytes);
  for (const [a, b] of [
    [NaN, 1],
    [0, NaN],
    [1.5, 1],
    [-1, 1],
    [0, -1],
    [0, 33],
    [32, 1],
    [Infinity, 0],
  ])
    assert.throws(() => f.readRows('w', a, b), RangeError, `${a}, ${b}`);
  assert.throws(() => f.readRows('w', /** @type {any} */ ('0'), 1), TypeError);
  assert.equal((await f.readRows('w', 32, 0)).length, 0);
  assert.equal((await f.readRows('w', 31, 1)).length, 68);
});

test('a tensor with a zero dimension has no rows to read', T, async () => {
  const bytes = writeGGUF({
    kv: [],
    tensors: [
      { name: 'empty', type: GGMLType.Q8_0, dims: [32, 0], data: new Uint8Array(0) },
      { name: 'flat', type: GGMLType.Q8_0, dims: [0, 4], data: new Uint8Array(0) },
    ],
  });
  const bq = await codec();
  for (const f of [await openGGUF(bytes), parseGGUF(bytes)]) {
    if ('readRows' in f) {
      assert.throws(() => f.readRows('empty', 0, 1), RangeError);
      assert.throws(() => f.readRows('flat', 0, 5), RangeError);
    }
    await assert.rejects(bq.dequantizeRows(f, 'flat', 0, 5), RangeError);
    await assert.rejects(bq.dequantizeRows(f, 'empty', 0, 1), RangeError);
    assert.equal((await bq.dequantizeRows(f, 'empty', 0, 0)).length, 0);
    assert.equal((await bq.dequantizeRows(f, 'flat', 1, 3)).length, 0);
  }
});

test('the header is read incrementally: each byte once, O(log size) reads', T, async () => {
  const vocab = Array.from({ length: 400000 }, (_, i) => `▁token${i}`);
  const bytes = writeGGUF({
    kv: [{ key: 'tokenizer.ggml.tokens', type: VT.ARRAY, itemType: VT.STRING, value: vocab }],
    tensors: [{ name: 'w', type: GGMLType.Q8_0, dims: [64, 32], data: q8Rows(32) }],
  });
  const header = parseGGUF(bytes).dataOffset;
  assert.ok(header > 6e6);
  /** @type {[number, number][]} */
  const ranges = [];
  const src = {
    size: bytes.length,
    read: async (/** @type {number} */ o, /** @type {number} */ n) => {
      ranges.push([o, n]);
      return bytes.slice(o, o + n);
    },
  };
  const f = await openGGUF(src);
  assert.equal(f.metadata.get('tokenizer.ggml.tokens')[399999], '▁token399999');
  // Contiguous reads from 0, none repeated; at most the header plus one read ahead.
  let end = 0;
  for (const [o, n] of ranges) {
    assert.equal(o, end, `read at ${o}, expected ${end}`);
    end += n;
  }
  const last = ranges[ranges.length - 1][1];
  assert.ok(end - last < header, `${end} bytes read for a ${header}-byte header`);
  assert.ok(ranges.length <= Math.ceil(Math.log2(header / (1 << 20))) + 2, `${ranges.length} reads`);
});

test('signal: an abort rejects with its reason, before or during reads, and later reads too', T, async () => {
  const { bytes } = sample();
  const pre = new AbortController();
  const why = new Error('stop');
  pre.abort(why);
  const s0 = custom(bytes);
  await assert.rejects(openGGUF(s0, { signal: pre.signal }), (e) => e === why);
  assert.equal(s0.reads, 0);
  // A read that never resolves.
  const stall = { size: bytes.length, read: () => new Promise(() => {}) };
  const c = new AbortController();
  const p = openGGUF(stall, { signal: c.signal });
  setTimeout(() => c.abort(why), 10);
  await assert.rejects(p, (e) => e === why);
  // AbortSignal.timeout's timer does not keep Node's event loop alive; this interval does.
  const alive = setInterval(() => {}, 1000);
  try {
    await assert.rejects(openGGUF(stall, { signal: AbortSignal.timeout(20) }), (e) => e.name === 'TimeoutError');
  } finally {
    clearInterval(alive);
  }
  // The signal is kept for readTensor and readRows.
  const later = new AbortController();
  const s1 = custom(bytes);
  const f = await openGGUF(s1, { signal: later.signal });
  later.abort(why);
  const before = s1.reads;
  await assert.rejects(f.readTensor('w'), (e) => e === why);
  await assert.rejects(f.readRows('w', 0, 1), (e) => e === why);
  assert.equal(s1.reads, before);
});

test('split models: each shard is decoded in its own byte order', T, async () => {
  const bq = await codec();
  const a = q8Rows(4, 1),
    b = q8Rows(3, 2);
  const want = [bq.dequantize('q8_0', a), bq.dequantize('q8_0', b)];
  for (const [le0, le1] of [
    [true, false],
    [false, true],
    [false, false],
  ]) {
    const f = await openGGUF([shard(0, 'a', a, le0), shard(1, 'b', b, le1)]);
    assert.equal(f.tensors[1].littleEndian, le1);
    assert.deepEqual(await bq.dequantizeTensor(f, 'a'), want[0], `${le0} ${le1} a`);
    assert.deepEqual(await bq.dequantizeTensor(f, 'b'), want[1], `${le0} ${le1} b`);
    assert.deepEqual(await bq.dequantizeRows(f, 'b', 1, 2), want[1].subarray(64), `${le0} ${le1} b rows`);
  }
});

test('Node files: a file truncated or rewritten after open is CHANGED, never short data', T, async () => {
  const bq = await codec();
  const dir = await mkdtemp(join(tmpdir(), 'bq-src-'));
  try {
    const { bytes } = sample();
    const path = join(dir, 'm.gguf');
    await writeFile(path, bytes);
    const f = await openGGUF(path);
    try {
      await truncate(path, bytes.length - 1500);
      await assert.rejects(f.readTensor('w'), gguf('CHANGED'));
      await assert.rejects(bq.dequantizeTensor(f, 'w'), gguf('CHANGED'));
    } finally {
      await f.close();
    }
    // Same size, new contents and mtime.
    await writeFile(path, bytes);
    const g = await openGGUF(path);
    try {
      assert.equal((await g.readTensor('w')).length, 2176);
      const other = bytes.slice();
      other.fill(7, parseGGUF(bytes).dataOffset);
      await writeFile(path, other);
      await utimes(path, new Date(2030, 0, 1), new Date(2030, 0, 1));
      await assert.rejects(g.readRows('w', 0, 1), gguf('CHANGED'));
    } finally {
      await g.close();
    }
    // A FileHandle whose file shrinks between stat and the first read: refused, not a loop.
    await writeFile(path, bytes);
    const fh = await open(path, 'r');
    try {
      const shrinking = {
        fd: fh.fd,
        stat: async (/** @type {any} */ o) => {
          const st = await fh.stat(o);
          await truncate(path, 100);
          return st;
        },
        read: fh.read.bind(fh),
      };
      await assert.rejects(openGGUF(shrinking), (e) => e instanceof GGUFError);
    } finally {
      await fh.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('parse options are validated before openGGUF reads a byte', T, async () => {
  const { bytes } = sample();
  for (const [options, E] of [
    [{ maxDepth: NaN }, RangeError],
    [{ maxDepth: '4' }, TypeError],
    [{ strictUtf8: 1 }, TypeError],
    [{ allowV1: 'yes' }, TypeError],
  ]) {
    const s = custom(bytes);
    await assert.rejects(openGGUF(s, /** @type {any} */ (options)), E, JSON.stringify(options));
    assert.equal(s.reads, 0, `${JSON.stringify(options)}: no read before the options are checked`);
  }
});

test('a file path that cannot be opened is a GGUFError naming it, with the cause', T, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'bq-open-'));
  try {
    const missing = join(dir, 'missing.gguf');
    await assert.rejects(openGGUF(missing), (/** @type {any} */ e) => {
      assert.ok(e instanceof GGUFError, `expected GGUFError, got ${e}`);
      assert.equal(e.code, 'OPEN');
      assert.match(e.message, /missing\.gguf/);
      assert.equal(e.cause?.code, 'ENOENT');
      return true;
    });
    // A directory opens but cannot be read as a file.
    await assert.rejects(openGGUF(dir), (/** @type {any} */ e) => e instanceof GGUFError);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test(
  'Node: a FIFO, a directory or a device is refused up front, by path or FileHandle, and never hangs',
  T,
  async () => {
    const { spawnSync, execFileSync } = await import('node:child_process');
    const dir = await mkdtemp(join(tmpdir(), 'bq-fifo-'));
    try {
      const fifo = join(dir, 'model.gguf');
      execFileSync('mkfifo', [fifo]);
      // In a child: a hang (open() of a FIFO blocks until a writer comes) would hold the process.
      const node = new URL('../js/node.js', import.meta.url).href;
      const script = `
      const { openGGUF, readImatrix } = await import(${JSON.stringify(node)});
      const { open, constants } = await import('node:fs/promises');
      const out = [];
      for (const p of [${JSON.stringify(fifo)}, ${JSON.stringify(dir)}, '/dev/zero']) {
        out.push(await openGGUF(p).then(() => 'opened', (e) => e.code));
        out.push(await readImatrix(p).then(() => 'opened', (e) => e.code));
      }
      const fh = await open(${JSON.stringify(fifo)}, constants.O_RDONLY | constants.O_NONBLOCK);
      out.push(await openGGUF(fh).then(() => 'opened', (e) => e.code));
      await fh.close();
      console.log(JSON.stringify(out));`;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        timeout: 15000,
        encoding: 'utf8',
      });
      assert.equal(r.signal, null, `the child hung: ${r.stderr}`);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), Array(7).fill('NOT_A_FILE'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

test('Node: file: URLs open as paths', T, async () => {
  const { pathToFileURL } = await import('node:url');
  const dir = await mkdtemp(join(tmpdir(), 'bq-fileurl-'));
  try {
    const { bytes } = sample();
    const p = join(dir, 'a model.gguf');
    await writeFile(p, bytes);
    for (const src of [pathToFileURL(p), pathToFileURL(p).href]) {
      const f = await openGGUF(src);
      assert.deepEqual(await f.readTensor('w'), parseGGUF(bytes).tensorBytes('w'));
      await f.close();
    }
    await assert.rejects(openGGUF(pathToFileURL(join(dir, 'missing.gguf'))), gguf('OPEN'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test(
  'split models: shards that disagree on split.count, split.no or split.tensors.count are refused, naming the shard',
  T,
  async () => {
    /**
     * A shard of a 2-shard split holding one tensor, with `split` keys (undefined: left out).
     * @param {string} name @param {{ no?: number, count?: number, tensors?: number }} split
     */
    const piece = (name, split) =>
      writeGGUF({
        kv: [
          ...(split.no === undefined ? [] : [{ key: 'split.no', type: VT.UINT16, value: split.no }]),
          ...(split.count === undefined ? [] : [{ key: 'split.count', type: VT.UINT16, value: split.count }]),
          ...(split.tensors === undefined
            ? []
            : [{ key: 'split.tensors.count', type: VT.INT32, value: split.tensors }]),
        ],
        tensors: [{ name, type: GGMLType.Q8_0, dims: [64, 2], data: q8Rows(2) }],
      });
    const first = piece('a', { no: 0, count: 2, tensors: 2 });
    // Agreeing shards open.
    assert.equal((await openGGUF([first, piece('b', { no: 1, count: 2, tensors: 2 })])).tensors.length, 2);
    for (const [what, second] of [
      ['split.count 5', piece('b', { no: 1, count: 5, tensors: 2 })],
      ['no split keys', piece('b', {})],
      ['no split.no', piece('b', { count: 2, tensors: 2 })],
      ['no split.count', piece('b', { no: 1, tensors: 2 })],
      ['split.tensors.count 3', piece('b', { no: 1, count: 2, tensors: 3 })],
    ])
      await assert.rejects(
        openGGUF([first, second]),
        (e) => gguf('SPLIT')(e) && /shard 2/.test(/** @type {Error} */ (e).message),
        /** @type {string} */ (what),
      );
    // The first shard must say it is shard 0.
    await assert.rejects(
      openGGUF([piece('a', { no: 1, count: 2, tensors: 2 }), piece('b', { no: 1, count: 2, tensors: 2 })]),
      (e) => gguf('SPLIT')(e) && /shard 1/.test(/** @type {Error} */ (e).message),
    );
  },
);
