// The blockquant CLI (Node only): `main(args, io)` returns the exit status (0 ok, 1 failure,
// 2 bad usage), so tests can run it in-process.
import { open as openFile } from 'node:fs/promises';
import {
  init,
  openGGUF,
  typeInfo,
  GGMLType,
  GGUFValueType,
  GGUFError,
  writeGGUFHeader,
  toLittleEndian,
} from './node.js';

const HELP = `usage: blockquant <command> [options]

commands:
  inspect FILE [--json]                    header, metadata, tensor table, totals per type
  dump FILE TENSOR [--rows A:B]            dequantized values, one row per line
  stats FILE [--tensor NAME] [--as T,...]  error of quantizing each F32/F16/BF16 tensor
                                           (default formats: q8_0,q5_1,q5_0,q4_1,q4_0)
  quantize IN OUT --type T [--keep-1d f32] requantize the float tensors of a model to T
                                           (q8_0, q4_0, q4_1, q5_0, q5_1), streaming
`;

const FORMATS = ['q8_0', 'q5_1', 'q5_0', 'q4_1', 'q4_0'];
/** @type {Set<number>} */
const FLOATS = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16]);
// llama.cpp's general.file_type for a whole model in one format (LLAMA_FTYPE_MOSTLY_*).
const FILE_TYPE = { q4_0: 2, q4_1: 3, q8_0: 7, q5_0: 8, q5_1: 9 };

class Usage extends Error {}

/** A progress bar on a terminal (nothing when stderr is not a TTY). */
/** @param {{ write(s: string): unknown, isTTY?: boolean }} err @param {number} done @param {number} total */
function progress(err, done, total) {
  if (!err.isTTY || total === 0) return;
  err.write(
    `\r[${'#'.repeat(Math.round((30 * done) / total)).padEnd(30)}] ${((100 * done) / total).toFixed(0)}%${done === total ? '\n' : ''}`,
  );
}

/** @param {string[]} args @param {string[]} flags flags taking a value @param {string[]} bools */
function parseArgs(args, flags, bools = []) {
  /** @type {string[]} */
  const pos = [];
  /** @type {Record<string, string | boolean>} */
  const opt = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith('--')) {
      const name = a.slice(2);
      if (bools.includes(name)) opt[name] = true;
      else if (flags.includes(name)) {
        if (i + 1 >= args.length) throw new Usage(`${a} needs a value`);
        opt[name] = args[++i];
      } else throw new Usage(`unknown option ${a}`);
    } else pos.push(a);
  }
  return { pos, opt };
}

/** @param {number[]} dims */
const shape = (dims) => `[${dims.join(', ')}]`;

/**
 * A metadata value for people: long arrays summarised.
 * @param {unknown} v
 * @returns {string}
 */
function show(v) {
  if (typeof v === 'bigint') return `${v}`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (ArrayBuffer.isView(v) || Array.isArray(v)) {
    const a = /** @type {ArrayLike<unknown>} */ (v);
    /** @type {string[]} */
    const items = Array.from({ length: Math.min(a.length, 5) }, (_, i) => show(a[i]));
    return `[${items.join(', ')}${a.length > 5 ? `, ... (${a.length} items)` : ''}]`;
  }
  return String(v);
}

/** @param {unknown} v */
const jsonable = (v) =>
  JSON.parse(
    JSON.stringify(v, (_, x) =>
      typeof x === 'bigint'
        ? x.toString()
        : ArrayBuffer.isView(x)
          ? Array.from(/** @type {any} */ (x), (y) => (typeof y === 'bigint' ? y.toString() : y))
          : x,
    ),
  );

/**
 * @param {string[]} args
 * @param {{ out: { write(s: string): unknown, isTTY?: boolean }, err: { write(s: string): unknown, isTTY?: boolean } }} io
 * @returns {Promise<number>}
 */
export async function main(args, io) {
  const [cmd, ...rest] = args;
  const print = (/** @type {string} */ s) => io.out.write(s + '\n');
  try {
    if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
      io.out.write(HELP);
      return cmd ? 0 : 2;
    }
    if (cmd === 'inspect') return await inspect(rest, print);
    if (cmd === 'dump') return await dump(rest, print);
    if (cmd === 'stats') return await stats(rest, print, io.err);
    if (cmd === 'quantize') return await quantize(rest, print, io.err);
    throw new Usage(`unknown command ${JSON.stringify(cmd)}`);
  } catch (e) {
    if (e instanceof Usage) {
      io.err.write(`blockquant: ${e.message}\n\n${HELP}`);
      return 2;
    }
    const file = /** @type {any} */ (e).file;
    const msg = e instanceof GGUFError ? `${e.message} [${e.code}]` : /** @type {Error} */ (e).message;
    io.err.write(`blockquant: ${file ? `${file}: ` : ''}${msg}\n`);
    return 1;
  }
}

/** Opens a file, tagging errors with its name. */
/** @param {string} path */
async function load(path) {
  try {
    return await openGGUF(path);
  } catch (e) {
    /** @type {any} */ (e).file = path;
    throw e;
  }
}

/** @param {string[]} args @param {(s: string) => void} print */
async function inspect(args, print) {
  const { pos, opt } = parseArgs(args, [], ['json']);
  if (pos.length !== 1) throw new Usage('inspect takes one FILE');
  const f = await load(pos[0]);
  try {
    const totals = new Map();
    for (const t of f.tensors) {
      const name = typeInfo(t.type).name;
      const e = totals.get(name) ?? { tensors: 0, elements: 0, bytes: 0 };
      e.tensors++;
      e.elements += t.nElements;
      e.bytes += t.byteLength;
      totals.set(name, e);
    }
    if (opt.json) {
      print(
        JSON.stringify(
          {
            version: f.version,
            alignment: f.alignment,
            littleEndian: f.littleEndian,
            dataOffset: f.dataOffset,
            metadata: f.kv.map((e) => ({
              key: e.key,
              type: e.type,
              ...(e.itemType === undefined ? {} : { itemType: e.itemType }),
              value: jsonable(e.value),
            })),
            tensors: f.tensors.map((t) => ({
              name: t.name,
              type: typeInfo(t.type).name,
              dims: t.dims,
              offset: t.offset,
              bytes: t.byteLength,
            })),
            totals: Object.fromEntries(totals),
          },
          null,
          2,
        ),
      );
      return 0;
    }
    print(
      `GGUF v${f.version}, ${f.littleEndian ? 'little' : 'big'}-endian, alignment ${f.alignment}, data at byte ${f.dataOffset}`,
    );
    print(`${f.kv.length} metadata entries, ${f.tensors.length} tensors\n`);
    print('metadata:');
    for (const e of f.kv) print(`  ${e.key} = ${show(e.value)}`);
    print('\ntensors:');
    const w = Math.max(4, ...f.tensors.map((t) => t.name.length));
    print(
      `  ${'name'.padEnd(w)}  ${'type'.padEnd(7)}  ${'shape'.padEnd(23)}  ${'bytes'.padStart(12)}  ${'offset'.padStart(13)}`,
    );
    for (const t of f.tensors) {
      print(
        `  ${t.name.padEnd(w)}  ${typeInfo(t.type).name.padEnd(7)}  ${shape(t.dims).padEnd(23)}  ${String(t.byteLength).padStart(12)}  ${String(t.offset).padStart(13)}`,
      );
    }
    print('\ntotals per type:');
    for (const [name, e] of totals)
      print(`  ${name.padEnd(7)}  ${e.tensors} tensors, ${e.elements} elements, ${e.bytes} bytes`);
    return 0;
  } finally {
    await f.close();
  }
}

/** @param {string[]} args @param {(s: string) => void} print */
async function dump(args, print) {
  const { pos, opt } = parseArgs(args, ['rows']);
  if (pos.length !== 2) throw new Usage('dump takes FILE and TENSOR');
  const f = await load(pos[0]);
  try {
    const t = f.tensors.find((x) => x.name === pos[1]);
    if (!t) throw Object.assign(new Error(`no tensor named ${JSON.stringify(pos[1])}`), { file: pos[0] });
    const rowLen = t.dims[0] ?? 1;
    const nRows = t.nElements / rowLen;
    let a = 0,
      b = nRows;
    if (typeof opt.rows === 'string') {
      const m = /^(\d+):(\d+)$/.exec(opt.rows);
      if (!m) throw new Usage('--rows takes A:B');
      [a, b] = [Number(m[1]), Math.min(Number(m[2]), nRows)];
      if (a > b) throw new Usage(`--rows ${opt.rows}: A is past B`);
    }
    const bq = await init();
    const chunk = Math.max(1, Math.floor((1 << 20) / rowLen));
    for (let r = a; r < b; r += chunk) {
      const k = Math.min(chunk, b - r);
      const v = await bq.dequantizeRows(f, t.name, r, k);
      for (let i = 0; i < k; i++) print(Array.from(v.subarray(i * rowLen, (i + 1) * rowLen), (x) => `${x}`).join(' '));
    }
    return 0;
  } finally {
    await f.close();
  }
}

/** @param {string[]} args @param {(s: string) => void} print @param {{ write(s: string): unknown, isTTY?: boolean }} err */
async function stats(args, print, err) {
  const { pos, opt } = parseArgs(args, ['tensor', 'as']);
  if (pos.length !== 1) throw new Usage('stats takes one FILE');
  const formats = typeof opt.as === 'string' ? opt.as.split(',') : FORMATS;
  for (const t of formats)
    if (!FORMATS.includes(t) && t !== 'q8_1' && t !== 'f16' && t !== 'bf16')
      throw new Usage(`--as: unknown format ${t}`);
  const f = await load(pos[0]);
  try {
    const bq = await init();
    const chosen = f.tensors.filter(
      (t) => FLOATS.has(t.type) && (opt.tensor === undefined || t.name === opt.tensor) && (t.dims[0] ?? 1) % 32 === 0,
    );
    if (opt.tensor !== undefined && chosen.length === 0)
      throw Object.assign(
        new Error(`no F32/F16/BF16 tensor named ${JSON.stringify(opt.tensor)} with rows of a multiple of 32`),
        { file: pos[0] },
      );
    const total = chosen.reduce((s, t) => s + t.nElements, 0);
    let done = 0;
    print(`${'tensor'.padEnd(32)} ${'format'.padEnd(6)} bits/w   RMSE         max |err|    SNR dB`);
    for (const t of chosen) {
      const x = await bq.dequantizeTensor(f, t.name);
      let signal = 0;
      for (const v of x) signal += v * v;
      for (const fmt of formats) {
        const s = bq.blockStats(fmt, x);
        let se = 0,
          mx = 0;
        for (let b = 0; b < s.rmse.length; b++) {
          se += s.rmse[b] * s.rmse[b] * 32;
          mx = Math.max(mx, s.maxAbs[b]);
        }
        const { blockSize, typeSize } = typeInfo(fmt);
        const snr = se === 0 ? Infinity : 10 * Math.log10(signal / se);
        print(
          `${t.name.padEnd(32)} ${fmt.padEnd(6)} ${((typeSize * 8) / blockSize).toFixed(2).padStart(6)}   ${Math.sqrt(se / x.length).toExponential(4)}   ${mx.toExponential(4)}   ${snr.toFixed(2).padStart(7)}`,
        );
      }
      done += t.nElements;
      progress(err, done, total);
    }
    return 0;
  } finally {
    await f.close();
  }
}

/** @param {string[]} args @param {(s: string) => void} print @param {{ write(s: string): unknown, isTTY?: boolean }} err */
async function quantize(args, print, err) {
  const { pos, opt } = parseArgs(args, ['type', 'keep-1d']);
  if (pos.length !== 2) throw new Usage('quantize takes IN and OUT');
  const type = opt.type;
  if (typeof type !== 'string' || !(type in FILE_TYPE))
    throw new Usage('--type must be one of q8_0, q4_0, q4_1, q5_0, q5_1');
  if (opt['keep-1d'] !== undefined && opt['keep-1d'] !== 'f32') throw new Usage('--keep-1d takes f32');
  const target = GGMLType[/** @type {keyof typeof GGMLType} */ (type.toUpperCase())];
  const f = await load(pos[0]);
  const bq = await init();
  try {
    // Each float tensor of 2+ dimensions whose rows are whole blocks becomes `type`; 1-D tensors
    // stay as they are (or become F32 with --keep-1d f32); everything else is copied.
    const plan = f.tensors.map((t) => {
      const is1d = t.dims.filter((d) => d > 1).length <= 1 && t.dims.length <= 1;
      let to = t.type;
      if (FLOATS.has(t.type)) {
        if (is1d) to = opt['keep-1d'] === 'f32' ? GGMLType.F32 : t.type;
        else if (t.dims[0] % 32 === 0) to = target;
      }
      const info = typeInfo(to);
      return { t, to, byteLength: (t.nElements / info.blockSize) * info.typeSize };
    });
    const kv = f.kv.map((e) =>
      e.key === 'general.file_type'
        ? { ...e, type: GGUFValueType.UINT32, value: FILE_TYPE[/** @type {keyof typeof FILE_TYPE} */ (type)] }
        : e,
    );
    const { header, offsets, alignment } = writeGGUFHeader({
      kv,
      alignment: f.alignment,
      tensors: plan.map((p) => ({ name: p.t.name, type: p.to, dims: p.t.dims, byteLength: p.byteLength })),
    });
    const out = await openFile(pos[1], 'w');
    try {
      await out.write(header, 0, header.length, 0);
      const total = plan.reduce((s, p) => s + p.t.nElements, 0);
      let done = 0;
      for (let i = 0; i < plan.length; i++) {
        const { t, to } = plan[i];
        const rowLen = t.dims[0] ?? 1;
        const nRows = t.nElements / rowLen;
        const rowsPer = Math.max(1, Math.floor((8 << 20) / (rowLen * 4))); // ~8 MB of f32 at a time
        let at = header.length + offsets[i];
        for (let r = 0; r < nRows; r += rowsPer) {
          const k = Math.min(rowsPer, nRows - r);
          let bytes;
          if (to === t.type) {
            bytes = await f.readRows(t.name, r, k);
            if (!f.littleEndian) bytes = toLittleEndian(t.type, bytes);
          } else {
            bytes = bq.quantize(to, await bq.dequantizeRows(f, t.name, r, k));
          }
          await out.write(bytes, 0, bytes.length, at);
          at += bytes.length;
        }
        const padTo = header.length + offsets[i] + Math.ceil(plan[i].byteLength / alignment) * alignment;
        if (padTo > at) await out.write(new Uint8Array(padTo - at), 0, padTo - at, at);
        done += t.nElements;
        progress(err, done, total);
      }
    } finally {
      await out.close();
    }
    const changed = plan.filter((p) => p.to !== p.t.type).length;
    print(`${pos[1]}: ${changed} of ${plan.length} tensors converted to ${type}`);
    return 0;
  } finally {
    await f.close();
  }
}
