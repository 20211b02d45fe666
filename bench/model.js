#!/usr/bin/env node
// End to end, a whole model: blockquant's quantizeModel (bench/model-child.js, a Node process of
// its own) against llama.cpp's llama_model_quantize (build/oracle/llama-oracle over the
// devDependency's libllama) on the same generated F16 file, 2 threads each: F16 -> Q4_K_M, and
// F16 -> IQ4_XS with an importance matrix. For each: wall time of each process (median of the
// rounds, which alternate the two), its peak RSS (VmHWM of /proc/<pid>/status, polled), and
// whether the two files are the same bytes. Writes bench/out/model.json.
//
//   node bench/model.js [--size MB] [--rounds N] [--threads N] [--keep]
//
// --size: the generated model's size (default 1024 MB: a llama-like model of embd 2048, ff 5632,
// vocab 32000, GQA 4, as many layers as fit; smaller sizes use embd 1024 and vocab 8192).
import { spawn } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { writeGGUFHeader } from '../js/gguf-write.js';
import { modelKV } from '../tests/lib/models.js';
import { toHalf } from '../tests/lib/oracle-k.js';
import { rng } from '../tests/lib/helpers.js';
import { LLAMA_ORACLE, oracleImatrix } from '../tests/lib/llama-oracle.js';
import { libDir } from '../tests/lib/ggml.js';
import { imatrixGGUF, f32div } from '../tests/lib/imatrix-files.js';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: '1024' },
    rounds: { type: 'string', default: '1' },
    threads: { type: 'string', default: '2' },
    keep: { type: 'boolean', default: false },
  },
});
const SIZE = Number(args.size) * 1e6;
const ROUNDS = Number(args.rounds);
const THREADS = Number(args.threads);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const F16 = 1;

/** The tensors of a llama-like model of about `size` bytes of F16. @param {number} size */
function shape(size) {
  const big = size >= 600e6;
  const [embd, ff, vocab, heads, headsKv] = big ? [2048, 5632, 32000, 16, 4] : [1024, 2816, 8192, 16, 4];
  const kvDim = (embd / heads) * headsKv;
  const perLayer = 2 * (2 * embd * embd + 2 * embd * kvDim + 3 * embd * ff + 2 * embd);
  const fixed = 2 * (2 * vocab * embd + embd);
  const layers = Math.max(1, Math.round((size - fixed) / perLayer));
  const spec = { layers, embd, ff, heads, headsKv, vocab };
  /** @type {{ name: string, dims: number[], type: number }[]} */
  const list = [
    { name: 'token_embd.weight', dims: [embd, vocab], type: F16 },
    { name: 'output_norm.weight', dims: [embd], type: 0 },
    { name: 'output.weight', dims: [embd, vocab], type: F16 },
  ];
  for (let i = 0; i < layers; i++)
    list.push(
      { name: `blk.${i}.attn_norm.weight`, dims: [embd], type: 0 },
      { name: `blk.${i}.attn_q.weight`, dims: [embd, embd], type: F16 },
      { name: `blk.${i}.attn_k.weight`, dims: [embd, kvDim], type: F16 },
      { name: `blk.${i}.attn_v.weight`, dims: [embd, kvDim], type: F16 },
      { name: `blk.${i}.attn_output.weight`, dims: [embd, embd], type: F16 },
      { name: `blk.${i}.ffn_norm.weight`, dims: [embd], type: 0 },
      { name: `blk.${i}.ffn_gate.weight`, dims: [embd, ff], type: F16 },
      { name: `blk.${i}.ffn_down.weight`, dims: [ff, embd], type: F16 },
      { name: `blk.${i}.ffn_up.weight`, dims: [embd, ff], type: F16 },
    );
  return { spec, list };
}

/**
 * Writes the model to `path` a chunk at a time: gaussian F16 values (sd 0.05) from a 4 Mi-value
 * pool read at seeded offsets (quantizing costs the same on them as on all-new values), F32 norms.
 * @param {string} path @param {number} size
 */
async function writeModel(path, size) {
  const { spec, list } = shape(size);
  const r = rng(1);
  const POOL = 1 << 22;
  const pool = new Uint16Array(POOL * 2);
  for (let i = 0; i < POOL; i++) pool[i] = pool[i + POOL] = toHalf(r.normal() * 0.05);
  const kv = modelKV(spec).map((e) => (e.key === 'general.file_type' ? { ...e, value: 1 } : e));
  const tensors = list.map((t) => ({ ...t, n: t.dims.reduce((a, b) => a * b, 1) }));
  const { header, offsets } = writeGGUFHeader({
    kv: /** @type {any} */ (kv),
    tensors: tensors.map((t) => ({ name: t.name, type: t.type, dims: t.dims, byteLength: t.n * (t.type ? 2 : 4) })),
  });
  const fh = await open(path, 'w');
  try {
    await fh.write(header, 0, header.length, 0);
    for (let i = 0; i < tensors.length; i++) {
      const t = tensors[i];
      let at = header.length + offsets[i];
      if (t.type === 0) {
        const f = Float32Array.from({ length: t.n }, () => 1 + 0.1 * r.normal());
        await fh.write(new Uint8Array(f.buffer), 0, f.byteLength, at);
        continue;
      }
      for (let done = 0; done < t.n;) {
        const k = Math.min(POOL, t.n - done);
        const from = Math.floor(r.next() * POOL);
        const part = pool.subarray(from, from + k);
        await fh.write(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), 0, part.byteLength, at);
        at += part.byteLength;
        done += k;
      }
    }
  } finally {
    await fh.close();
  }
  return { spec, list };
}

/**
 * Runs a command, polling its peak RSS.
 * @param {string} cmd @param {string[]} argv
 * @returns {Promise<{ seconds: number, peakRSS: number, out: string, err: string }>}
 */
function measure(cmd, argv) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '',
      err = '',
      peak = 0;
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.pid}/status`, 'utf8'));
        if (m) peak = Math.max(peak, Number(m[1]) * 1024);
      } catch {
        // gone
      }
    }, 10);
    p.on('error', reject);
    p.on('exit', (code) => {
      clearInterval(poll);
      const seconds = (performance.now() - t0) / 1000;
      if (code !== 0) reject(new Error(`${cmd} exited with ${code}: ${err.slice(-2000)}`));
      else resolve({ seconds, peakRSS: peak, out, err });
    });
  });
}

/** @param {string} path */
function sha(path) {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => h.update(d))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'bq-bench-model-'));
try {
  const input = join(dir, 'in.gguf');
  const t0 = performance.now();
  const { spec, list } = await writeModel(input, SIZE);
  const size = statSync(input).size;
  console.log(
    `model: ${(size / 1e6).toFixed(0)} MB F16, ${spec.layers} layers, embd ${spec.embd}, ff ${spec.ff}, vocab ${spec.vocab} ` +
      `(written in ${((performance.now() - t0) / 1000).toFixed(1)} s); ${THREADS} threads, ${ROUNDS} round(s)`,
  );
  // The importance matrix: sums and counts for blockquant (an imatrix GGUF, as llama-imatrix
  // writes), their quotients for the oracle (what llama-quantize hands to llama_model_quantize).
  const r = rng(2);
  const entries = list
    .filter((t) => t.dims.length >= 2)
    .map((t) => ({
      name: t.name,
      ne0: t.dims[0],
      sums: Float32Array.from({ length: t.dims[0] }, () => 10 + 100 * r.next()),
      counts: [64],
    }));
  writeFileSync(join(dir, 'imatrix.gguf'), imatrixGGUF(entries, { datasets: ['bench'], chunkCount: 8 }).bytes);
  writeFileSync(
    join(dir, 'imatrix.bin'),
    oracleImatrix(entries.map((e) => [e.name, Float32Array.from(e.sums, (x) => f32div(x, 64))])),
  );
  const jobs = [
    { label: 'F16 -> Q4_K_M', ftype: 'Q4_K_M', id: 15, imatrix: false },
    { label: 'F16 -> IQ4_XS, imatrix', ftype: 'IQ4_XS', id: 30, imatrix: true },
  ];
  const results = [];
  for (const j of jobs) {
    const ours = join(dir, 'ours.gguf'),
      theirs = join(dir, 'llama.gguf');
    /** @type {{ seconds: number, peakRSS: number }[]} */
    const a = [],
      b = [];
    for (let round = 0; round < ROUNDS; round++) {
      rmSync(ours, { force: true });
      rmSync(theirs, { force: true });
      const kvs = j.imatrix
        ? [
            '--override-kv',
            `quantize.imatrix.file=str:${join(dir, 'imatrix.gguf')}`,
            '--override-kv',
            'quantize.imatrix.dataset=str:bench',
            '--override-kv',
            `quantize.imatrix.entries_count=int:${entries.length}`,
            '--override-kv',
            'quantize.imatrix.chunks_count=int:8',
          ]
        : [];
      const llamaArgs = [
        libDir(),
        input,
        theirs,
        String(j.id),
        '--nthread',
        String(THREADS),
        ...(j.imatrix ? ['--imatrix', join(dir, 'imatrix.bin')] : []),
        ...kvs,
      ];
      const oursArgs = [
        join(ROOT, 'bench/model-child.js'),
        input,
        ours,
        j.ftype,
        String(THREADS),
        ...(j.imatrix ? [join(dir, 'imatrix.gguf')] : []),
      ];
      // Alternate which runs first, so neither always gets the warmer page cache.
      if (round % 2 === 0) {
        b.push(await measure(LLAMA_ORACLE, llamaArgs));
        a.push(await measure(process.execPath, oursArgs));
      } else {
        a.push(await measure(process.execPath, oursArgs));
        b.push(await measure(LLAMA_ORACLE, llamaArgs));
      }
    }
    const same = (await sha(ours)) === (await sha(theirs));
    const med = (/** @type {number[]} */ v) => [...v].sort((p, q) => p - q)[v.length >> 1];
    const row = {
      job: j.label,
      blockquantSeconds: med(a.map((x) => x.seconds)),
      llamaSeconds: med(b.map((x) => x.seconds)),
      blockquantPeakRSS: Math.max(...a.map((x) => x.peakRSS)),
      llamaPeakRSS: Math.max(...b.map((x) => x.peakRSS)),
      sameBytes: same,
    };
    results.push(row);
    const mb = (/** @type {number} */ x) => `${(x / 2 ** 20).toFixed(0)} MiB`;
    console.log(
      `${j.label.padEnd(24)} blockquant ${row.blockquantSeconds.toFixed(2)} s, peak RSS ${mb(row.blockquantPeakRSS)}` +
        `   llama ${row.llamaSeconds.toFixed(2)} s, peak RSS ${mb(row.llamaPeakRSS)}` +
        `   ${(row.llamaSeconds / row.blockquantSeconds).toFixed(2)}x llama's speed   ${same ? 'same bytes' : 'BYTES DIFFER'}`,
    );
  }
  mkdirSync(join(ROOT, 'bench/out'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench/out/model.json'),
    JSON.stringify({ size, spec, threads: THREADS, rounds: ROUNDS, results }, null, 2) + '\n',
  );
  if (results.some((x) => !x.sameBytes)) process.exitCode = 1;
} finally {
  if (args.keep) console.log(`files kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
