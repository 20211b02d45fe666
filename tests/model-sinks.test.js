// quantizeModel's sources, sinks, progress and cancelling: every sink kind (a function, a
// WritableStream, a Node FileHandle, a path, an array per shard) gets the same bytes, which equal
// llama_model_quantize's; every source kind (bytes, a Blob, a path, a FileHandle, an open file, a
// parseGGUF result, split shards, an imatrix file) gives the same output; onProgress is monotone
// and complete; an AbortSignal stops the work and leaves nothing at the output path; a path sink
// never writes over its input or (without force) an existing file, and a failing sink leaves
// nothing behind.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  mkdtempSync,
  rmSync,
  writeFileSync,
  readFileSync,
  readdirSync,
  existsSync,
  linkSync,
  symlinkSync,
  mkdirSync,
  createWriteStream,
} from 'node:fs';
import { Writable } from 'node:stream';
import { once } from 'node:events';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { quantizeModel, planQuantize, openGGUF, parseGGUF, outputPaths, OutputError, typeInfo } from '../js/node.js';
import { planFor } from '../js/model/recipe.js';
import { makeModel, splitModel, F16 } from './lib/models.js';
import { llamaQuantize } from './lib/llama-oracle.js';
import { oracleOptions, LLAMA_FTYPE } from './lib/plan-oracle.js';
import { imatrixGGUF, f32div } from './lib/imatrix-files.js';
import { rng, SEED, codec } from './lib/helpers.js';

console.log(`model-sinks: seed ${SEED} (BQ_SEED=${SEED} to replay)`);

const TMP = mkdtempSync(join(tmpdir(), 'bq-model-sinks-'));
after(() => rmSync(TMP, { recursive: true, force: true }));
let n = 0;
/** A fresh folder. */
const folder = () => {
  const d = join(TMP, String(n++));
  mkdirSync(d);
  return d;
};

const bq = await codec();
const m = makeModel({ vocab: 64, layers: 2, heads: 8, headsKv: 2, rows: 8, type: F16, seed: SEED });
const options = { ftype: 'Q4_K_M', codec: bq };
const [expected] = llamaQuantize(m.bytes, LLAMA_FTYPE.Q4_K_M).out;
assert.ok(expected, 'the oracle wrote the file');

/** @param {Uint8Array[]} parts */
function concat(parts) {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

/** @param {Uint8Array} a @param {Uint8Array} b @param {string} what */
function same(a, b, what) {
  assert.equal(a.length, b.length, `${what}: length`);
  assert.ok(Buffer.from(a).equals(Buffer.from(b)), `${what}: bytes differ`);
}

/** Collects what a function sink is given. */
function collector() {
  /** @type {Uint8Array[]} */
  const parts = [];
  return { sink: (/** @type {Uint8Array} */ c) => void parts.push(c.slice()), bytes: () => concat(parts) };
}

test('a function sink gets llama_model_quantize bytes, header first, chunks in order', async () => {
  const c = collector();
  const plan = await quantizeModel(m.bytes, c.sink, options);
  same(c.bytes(), expected, 'function sink');
  assert.equal(plan.totalBytes, expected.length);
});

test('an async function sink is awaited before the next chunk', async () => {
  /** @type {Uint8Array[]} */
  const parts = [];
  let busy = false;
  await quantizeModel(
    m.bytes,
    async (/** @type {Uint8Array} */ c) => {
      assert.equal(busy, false, 'a chunk arrived while the last was being written');
      busy = true;
      await new Promise((r) => setTimeout(r, 1));
      parts.push(c.slice());
      busy = false;
    },
    options,
  );
  same(concat(parts), expected, 'async function sink');
});

test('a WritableStream is written through and closed', async () => {
  /** @type {Uint8Array[]} */
  const parts = [];
  let closed = false;
  const ws = new WritableStream(
    {
      write(c) {
        parts.push(c.slice());
      },
      close() {
        closed = true;
      },
    },
    { highWaterMark: 2 },
  );
  await quantizeModel(m.bytes, ws, options);
  assert.ok(closed, 'the stream was closed');
  same(concat(parts), expected, 'WritableStream');
});

test('a Node FileHandle is written at its position and left open', async () => {
  const p = join(folder(), 'fh.gguf');
  const fh = await open(p, 'w');
  try {
    await fh.write(new Uint8Array(0));
    await quantizeModel(m.bytes, fh, options);
    await fh.write(new Uint8Array([1, 2, 3])); // still open: appended after the model
  } finally {
    await fh.close();
  }
  const b = new Uint8Array(readFileSync(p));
  same(b.subarray(0, expected.length), expected, 'FileHandle');
  assert.deepEqual([...b.subarray(expected.length)], [1, 2, 3]);
});

test('a Node Writable stream: backpressure waited for, ended at the end, errors reject', async () => {
  const p = join(folder(), 'ws.gguf');
  const ws = createWriteStream(p);
  await once(ws, 'open'); // with its fd, as process.stdout has one: still a stream, not a FileHandle
  assert.equal(typeof ws.fd, 'number');
  await quantizeModel(m.bytes, ws, options);
  assert.ok(ws.writableFinished, 'the stream was ended');
  same(new Uint8Array(readFileSync(p)), expected, 'fs.WriteStream');
  // A slow consumer with a tiny buffer: every chunk still arrives, in order.
  /** @type {Uint8Array[]} */
  const parts = [];
  let drains = 0;
  const slow = new Writable({
    highWaterMark: 16,
    write(chunk, _enc, cb) {
      parts.push(new Uint8Array(chunk));
      setTimeout(cb, 0);
    },
  });
  slow.on('drain', () => drains++);
  await quantizeModel(m.bytes, slow, options);
  same(concat(parts), expected, 'slow Writable');
  assert.ok(drains > 0, 'backpressure was met');
  const broken = new Writable({
    write(_c, _e, cb) {
      cb(new Error('EPIPE-ish'));
    },
  });
  broken.on('error', () => {});
  await assert.rejects(quantizeModel(m.bytes, broken, options), /EPIPE-ish/);
});

test('a path gets the file, and nothing else is left in its folder', async () => {
  const d = folder();
  const out = join(d, 'out.gguf');
  await quantizeModel(m.bytes, out, options);
  same(new Uint8Array(readFileSync(out)), expected, 'path sink');
  assert.deepEqual(readdirSync(d), ['out.gguf']);
  // A file: URL is a path too.
  await quantizeModel(m.bytes, pathToFileURL(join(d, 'url.gguf')), options);
  same(new Uint8Array(readFileSync(join(d, 'url.gguf'))), expected, 'file: URL sink');
});

test('keepSplit: an array of sinks, or a path named as llama-quantize names shards', async () => {
  const sp = splitModel({ vocab: 64, layers: 2, rows: 4, type: F16, seed: SEED }, [4, 10, 7]);
  const r = llamaQuantize(sp.shards, LLAMA_FTYPE.Q5_K_M, { keepSplit: true });
  assert.equal(r.out.length, 3);
  const cs = [collector(), collector(), collector()];
  await quantizeModel(
    sp.shards,
    cs.map((c) => c.sink),
    { ftype: 'Q5_K_M', keepSplit: true, codec: bq },
  );
  cs.forEach((c, i) => same(c.bytes(), r.out[i], `shard ${i}`));
  const d = folder();
  await quantizeModel(sp.shards, join(d, 'model.gguf'), { ftype: 'Q5_K_M', keepSplit: true, codec: bq });
  const names = ['model-00001-of-00003.gguf', 'model-00002-of-00003.gguf', 'model-00003-of-00003.gguf'];
  assert.deepEqual(readdirSync(d).sort(), names);
  names.forEach((f, i) => same(new Uint8Array(readFileSync(join(d, f))), r.out[i], f));
  // One sink for three shards (or three for one) is refused before anything is written.
  await assert.rejects(quantizeModel(sp.shards, collector().sink, { ftype: 'Q5_K_M', keepSplit: true, codec: bq }), {
    code: 'BAD_OPTION',
  });
  await assert.rejects(quantizeModel(m.bytes, [collector().sink, collector().sink], options), { code: 'BAD_OPTION' });
});

test("outputPaths: llama-quantize's keep-split names", () => {
  assert.deepEqual(outputPaths('a/out.gguf', 2, true), ['a/out-00001-of-00002.gguf', 'a/out-00002-of-00002.gguf']);
  assert.deepEqual(outputPaths('out.gguf', 1, true), ['out-00001-of-00001.gguf']);
  assert.deepEqual(outputPaths('out', 1, true), ['out-00001-of-00001.gguf']);
  // The tool drops the last five characters of any name that holds ".gguf" (quantize.cpp: find, then substr).
  assert.deepEqual(outputPaths('x.gguf.bin', 1, true), ['x.ggu-00001-of-00001.gguf']);
  assert.deepEqual(outputPaths('out.gguf', 1, false), ['out.gguf']);
});

test('every source kind gives the same bytes', async () => {
  const d = folder();
  const path = join(d, 'in.gguf');
  writeFileSync(path, m.bytes);
  const fh = await open(path, 'r');
  const opened = await openGGUF(path);
  try {
    const sources = {
      bytes: m.bytes,
      ArrayBuffer: m.bytes.slice().buffer,
      Blob: new Blob([m.bytes]),
      path,
      FileHandle: fh,
      'an open file': opened,
      'a parseGGUF result': parseGGUF(m.bytes),
      '{ size, read }': {
        size: m.bytes.length,
        read: async (/** @type {number} */ o, /** @type {number} */ l) => m.bytes.slice(o, o + l),
      },
    };
    for (const [what, src] of Object.entries(sources)) {
      const c = collector();
      await quantizeModel(src, c.sink, options);
      same(c.bytes(), expected, what);
    }
  } finally {
    await fh.close();
    await opened.close();
  }
  // Split shards as paths give what the one-file model gives.
  const sp = splitModel({ vocab: 64, layers: 2, rows: 4, type: F16, seed: SEED }, [4, 10, 7]);
  const paths = sp.shards.map((b, i) => {
    const p = join(d, `s-0000${i + 1}-of-00003.gguf`);
    writeFileSync(p, b);
    return p;
  });
  const a = collector(),
    b = collector();
  await quantizeModel(paths, a.sink, options);
  await quantizeModel(sp.whole, b.sink, options);
  same(a.bytes(), b.bytes(), 'split shards');
});

test('an imatrix file (GGUF) gives the bytes of its weights as a Map, and names quantize.imatrix.file', async () => {
  const r = rng(SEED + 7);
  const entries = m.tensors
    .filter((t) => t.dims.length >= 2)
    .map((t) => ({
      name: t.name,
      ne0: t.dims[0],
      sums: Array.from({ length: t.dims[0] }, () => 0.5 + 10 * r.next()),
      counts: [4],
    }));
  const d = folder();
  const imPath = join(d, 'imatrix.gguf');
  writeFileSync(imPath, imatrixGGUF(entries, { datasets: ['wiki.txt'], chunkCount: 7 }).bytes);
  const c = collector();
  const plan = await quantizeModel(m.bytes, c.sink, { ftype: 'IQ4_XS', imatrix: imPath, codec: bq });
  const kv = new Map(plan.kv.map((e) => [e.key, e.value]));
  assert.equal(kv.get('quantize.imatrix.file'), imPath);
  assert.equal(kv.get('quantize.imatrix.dataset'), 'wiki.txt');
  assert.equal(kv.get('quantize.imatrix.chunks_count'), 7);
  // The oracle, given the weights llama-quantize derives (sum / count) and the tool's KVs.
  const weights = new Map(entries.map((e) => [e.name, Float32Array.from(e.sums, (x) => f32div(x, 4))]));
  const o = { ftype: 'IQ4_XS', imatrix: weights };
  const ref = llamaQuantize(m.bytes, LLAMA_FTYPE.IQ4_XS, oracleOptions(o, plan)).out[0];
  same(c.bytes(), ref, 'imatrix file');
});

test('onProgress is monotone and complete', async () => {
  /** @type {import('../js/model/quantize.js').Progress[]} */
  const seen = [];
  const plan = await quantizeModel(m.bytes, collector().sink, { ...options, onProgress: (p) => seen.push(p) });
  assert.ok(seen.length >= plan.tensors.length, 'at least one call per tensor');
  for (let i = 1; i < seen.length; i++) {
    assert.ok(seen[i].bytesOut > seen[i - 1].bytesOut || seen[i].bytesIn >= seen[i - 1].bytesIn, `call ${i}`);
    assert.ok(seen[i].bytesOut >= seen[i - 1].bytesOut, `bytesOut at call ${i}`);
    assert.ok(seen[i].bytesIn >= seen[i - 1].bytesIn, `bytesIn at call ${i}`);
    assert.ok(seen[i].index >= seen[i - 1].index, `index at call ${i}`);
  }
  assert.deepEqual(
    [...new Set(seen.map((p) => p.index))],
    plan.tensors.map((_, i) => i),
  );
  assert.deepEqual(
    [...new Set(seen.map((p) => p.tensor))],
    plan.tensors.map((t) => t.name),
  );
  const last = seen[seen.length - 1];
  assert.equal(last.bytesOut, expected.length);
  assert.equal(last.total, expected.length);
  assert.equal(last.bytesIn, plan.bytesIn);
  assert.equal(last.count, plan.tensors.length);
  assert.equal(last.etaSeconds, 0);
  for (const p of seen) assert.ok(p.etaSeconds === null || p.etaSeconds >= 0);
});

test('an AbortSignal stops the work: the promise rejects with its reason, nothing is left at the path', async () => {
  const d = folder();
  const out = join(d, 'out.gguf');
  const ac = new AbortController();
  const reason = new Error('stop');
  let calls = 0;
  await assert.rejects(
    quantizeModel(m.bytes, out, {
      ...options,
      signal: ac.signal,
      onProgress: () => {
        if (++calls === 3) ac.abort(reason);
      },
    }),
    (e) => e === reason,
  );
  assert.equal(calls, 3, 'no chunk was written after the abort');
  assert.deepEqual(readdirSync(d), []);
  // An aborted WritableStream is aborted with the reason too.
  /** @type {unknown} */
  let abortedWith;
  const ws = new WritableStream({
    abort(r) {
      abortedWith = r;
    },
  });
  const ac2 = new AbortController();
  await assert.rejects(
    quantizeModel(m.bytes, ws, { ...options, signal: ac2.signal, onProgress: () => ac2.abort(reason) }),
    (e) => e === reason,
  );
  assert.equal(abortedWith, reason);
  // An abort at the last chunk, when every byte is in the temporary file: still nothing at the path.
  const ac3 = new AbortController();
  await assert.rejects(
    quantizeModel(m.bytes, out, {
      ...options,
      signal: ac3.signal,
      onProgress: (p) => {
        if (p.bytesOut === p.total) ac3.abort(reason);
      },
    }),
    (e) => e === reason,
  );
  assert.deepEqual(readdirSync(d), []);
  // A signal aborted before the call: nothing is opened or written.
  await assert.rejects(
    quantizeModel(m.bytes, out, { ...options, signal: AbortSignal.abort(reason) }),
    (e) => e === reason,
  );
  assert.deepEqual(readdirSync(d), []);
});

test('a path sink refuses its input (by any name), a non-file, and an existing file without force', async () => {
  const d = folder();
  const input = join(d, 'in.gguf');
  writeFileSync(input, m.bytes);
  linkSync(input, join(d, 'hard.gguf'));
  symlinkSync(input, join(d, 'sym.gguf'));
  for (const out of [input, join(d, 'hard.gguf'), join(d, 'sym.gguf'), `${d}/./in.gguf`]) {
    await assert.rejects(quantizeModel(input, out, { ...options, force: true }), (e) => {
      assert.ok(e instanceof OutputError);
      assert.equal(/** @type {OutputError} */ (e).code, 'SAME_FILE');
      return true;
    });
  }
  // The input opened first (openGGUF) is still known as the input.
  const f = await openGGUF(input);
  try {
    await assert.rejects(quantizeModel(f, join(d, 'hard.gguf'), { ...options, force: true }), { code: 'SAME_FILE' });
  } finally {
    await f.close();
  }
  same(new Uint8Array(readFileSync(input)), m.bytes, 'the input is untouched');
  mkdirSync(join(d, 'dir'));
  await assert.rejects(quantizeModel(input, join(d, 'dir'), { ...options, force: true }), { code: 'NOT_A_FILE' });
  const kept = join(d, 'precious.gguf');
  writeFileSync(kept, 'precious');
  await assert.rejects(quantizeModel(input, kept, options), { code: 'EXISTS' });
  assert.equal(readFileSync(kept, 'utf8'), 'precious');
  await quantizeModel(input, kept, { ...options, force: true });
  same(new Uint8Array(readFileSync(kept)), expected, 'force replaces it');
  assert.deepEqual(readdirSync(d).sort(), ['dir', 'hard.gguf', 'in.gguf', 'precious.gguf', 'sym.gguf']);
});

test('an output that appears while writing is not replaced without force (link, not rename)', async () => {
  const d = folder();
  const out = join(d, 'out.gguf');
  let made = false;
  await assert.rejects(
    quantizeModel(m.bytes, out, {
      ...options,
      onProgress: () => {
        if (!made) writeFileSync(out, 'someone else');
        made = true;
      },
    }),
    { code: 'EXISTS' },
  );
  assert.equal(readFileSync(out, 'utf8'), 'someone else');
  assert.deepEqual(readdirSync(d), ['out.gguf']);
  // With keepSplit, one shard's name taken refuses the whole job before any shard is written.
  const sp = splitModel({ vocab: 64, layers: 2, rows: 4, type: F16, seed: SEED }, [4, 10, 7]);
  const base = join(d, 'm.gguf');
  const [, second] = outputPaths(base, 3, true);
  writeFileSync(second, 'taken');
  await assert.rejects(quantizeModel(sp.shards, base, { ftype: 'Q8_0', keepSplit: true, codec: bq }), {
    code: 'EXISTS',
  });
  assert.deepEqual(
    readdirSync(d).sort(),
    ['m-00002-of-00003.gguf', 'out.gguf'],
    'refused before any shard was written',
  );
  // A shard name taken while writing: the shard placed before it is taken back, none is left.
  rmSync(second);
  let taken = false;
  await assert.rejects(
    quantizeModel(sp.shards, base, {
      ftype: 'Q8_0',
      keepSplit: true,
      codec: bq,
      onProgress: () => {
        if (!taken) writeFileSync(second, 'taken');
        taken = true;
      },
    }),
    { code: 'EXISTS' },
  );
  assert.deepEqual(readdirSync(d).sort(), ['m-00002-of-00003.gguf', 'out.gguf']);
  assert.equal(readFileSync(second, 'utf8'), 'taken');
});

test('a failing source leaves nothing at the path; a failing sink function rejects the call', async () => {
  const d = folder();
  const out = join(d, 'out.gguf');
  let reads = 0;
  const src = {
    size: m.bytes.length,
    read: async (/** @type {number} */ o, /** @type {number} */ l) => {
      if (++reads > 3) throw new Error('disk gone');
      return m.bytes.slice(o, o + l);
    },
  };
  await assert.rejects(quantizeModel(src, out, options), (e) =>
    /disk gone/.test(String(/** @type {any} */ (e).cause ?? e)),
  );
  assert.deepEqual(readdirSync(d), []);
  let calls = 0;
  await assert.rejects(
    quantizeModel(
      m.bytes,
      () => {
        if (++calls === 2) throw new Error('full');
      },
      options,
    ),
    /full/,
  );
  assert.equal(existsSync(out), false);
});

test('a plan that needs a type this build cannot write is refused before any byte', async () => {
  const r = rng(SEED);
  const im = new Map(
    m.tensors
      .filter((t) => t.dims.length >= 2)
      .map((t) => [t.name, Float32Array.from({ length: t.dims[0] }, () => 0.5 + r.next())]),
  );
  const o = { ftype: 'IQ2_XXS', imatrix: im };
  const p = planFor(parseGGUF(m.bytes), o);
  const d = folder();
  let wrote = 0;
  if (p.tensors.every((t) => t.to === t.from || typeInfo(t.to).quantize)) {
    // The IQ2 quantizers have landed: then the file must be llama's.
    const c = collector();
    await quantizeModel(m.bytes, c.sink, { ...o, codec: bq });
    same(c.bytes(), llamaQuantize(m.bytes, LLAMA_FTYPE.IQ2_XXS, oracleOptions(o, p)).out[0], 'IQ2_XXS');
    return;
  }
  await assert.rejects(
    quantizeModel(m.bytes, () => void wrote++, { ...o, codec: bq }),
    { code: 'UNSUPPORTED' },
  );
  await assert.rejects(quantizeModel(m.bytes, join(d, 'x.gguf'), { ...o, codec: bq }), { code: 'UNSUPPORTED' });
  assert.equal(wrote, 0);
  assert.deepEqual(readdirSync(d), []);
  // planQuantize still plans it (a preview).
  const plan = await planQuantize(m.bytes, o);
  assert.ok(plan.tensors.some((t) => t.to !== t.from && !typeInfo(t.to).quantize));
});

test('bad options are refused before any work', async () => {
  for (const o of [
    { ftype: 'Q4_0', threads: 0 },
    { ftype: 'Q4_0', threads: 1.5 },
    { ftype: 'Q4_0', codec: {} },
    { ftype: 'Q4_0', codec: bq, threads: 2 },
    { ftype: 'Q4_0', onProgress: 1 },
    { ftype: 'Q4_0', signal: {} },
    { ftype: 'Q4_0', dryRun: true },
  ])
    await assert.rejects(
      quantizeModel(m.bytes, () => {}, /** @type {any} */ (o)),
      { code: 'BAD_OPTION' },
      JSON.stringify(o),
    );
  await assert.rejects(quantizeModel(m.bytes, /** @type {any} */ (42), options), TypeError);
  await assert.rejects(
    quantizeModel(m.bytes, () => {}, /** @type {any} */ (null)),
    { code: 'BAD_OPTION' },
  );
  await assert.rejects(
    quantizeModel(m.bytes, () => {}, { ftype: 'Q9_9' }),
    { code: 'UNKNOWN_FTYPE' },
  );
});

test('the browser entry point (js/index.js): a Blob in, a WritableStream out, as a page does', async () => {
  const web = await import('../js/index.js');
  /** @type {Uint8Array[]} */
  const parts = [];
  const plan = await web.planQuantize(new Blob([m.bytes]), { ftype: 'Q4_K_M' });
  await web.quantizeModel(new Blob([m.bytes]), new WritableStream({ write: (c) => void parts.push(c.slice()) }), {
    ftype: 'Q4_K_M',
    codec: bq,
  });
  same(concat(parts), expected, 'js/index.js');
  assert.equal(plan.totalBytes, expected.length);
  // A path is not a sink there.
  await assert.rejects(web.quantizeModel(m.bytes, join(TMP, 'x.gguf'), options), TypeError);
});
