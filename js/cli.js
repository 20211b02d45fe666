// The blockquant CLI (Node only). `main(args, io)` returns the exit status, so tests can run it
// in-process. An output is written under a temporary name beside its final one and renamed into
// place only when complete and flushed: a user's file is never truncated, never the input, and
// never replaced without --force.
import { open as openFile, stat, lstat, rename, link, unlink } from 'node:fs/promises';
import { readFileSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
  init,
  openGGUF,
  typeInfo,
  typeId,
  CODEC_TYPES,
  GGMLType,
  GGUFValueType,
  GGUFError,
  writeGGUFHeader,
  toLittleEndian,
  tensorTypeName,
} from './node.js';

/** @typedef {{ write(s: string): unknown, isTTY?: boolean }} Out */
/** @typedef {Record<string, string | boolean | undefined>} Values */
/**
 * @typedef {{
 *   usage: string, about: string, positionals: string[],
 *   options: Record<string, { type: 'string' | 'boolean' }>, details: string,
 *   run: (pos: string[], opt: Values, print: (s: string) => void, err: Out) => Promise<number>,
 * }} Command
 */

/** @typedef {import('./types.js').TypeInfo & { id: number }} Format */

// Every list of formats comes from the type table (js/types.js), so a new format needs no change
// here; only llama.cpp's file types below are not in it.
/** @type {Format[]} */
const CODEC = CODEC_TYPES.map((id) => ({ id, ...typeInfo(id) }));
/** Bits per weight of a format. @param {Format} t */
const bitsPerWeight = (t) => (t.typeSize * 8) / t.blockSize;
// Activation formats (q8_1, q8_K): another type's dots pair with them, and they have no dot of
// their own as weights. (q8_0 pairs with Q4_0/Q5_0 and is also a weight format.)
const ACTIVATION = new Set(
  CODEC.filter((t) => !t.dot && CODEC.some((u) => u.id !== t.id && u.vecDot === t.id)).map((t) => t.id),
);
// What quantize writes: the block formats the codec quantizes, activation formats excepted; most
// bits per weight first.
const MODEL_FORMATS = CODEC.filter((t) => t.blockSize > 1 && t.quantize && !ACTIVATION.has(t.id)).sort(
  (a, b) => bitsPerWeight(b) - bitsPerWeight(a) || b.id - a.id,
);
// What stats can try: every format with block statistics; by default the model formats among them.
const STATS_FORMATS = CODEC.filter((t) => t.stats);
const STATS_DEFAULT = MODEL_FORMATS.filter((t) => t.stats);
// Where a tensor whose rows are not whole blocks of the target goes: llama.cpp's fallback for that
// target (llama-quant.cpp: the super-block types fall back to a 32-value format; when that does not
// fit either, llama.cpp writes F16 and we keep the float type). Names of formats, checked at start.
/** @type {Record<string, string>} */
const FALLBACK_OF = {
  q2_K: 'iq4_nl',
  q3_K: 'iq4_nl',
  iq4_xs: 'iq4_nl',
  q4_K: 'q5_0',
  q5_K: 'q5_1',
  q6_K: 'q8_0',
  tq1_0: 'q4_0',
  tq2_0: 'q4_0',
};
const FALLBACKS = [...new Set(Object.values(FALLBACK_OF))].map((n) => {
  const f = CODEC.find((t) => t.name === n && t.quantize);
  if (!f) throw new Error(`blockquant CLI: fallback format ${n} cannot be quantized by this build`);
  return f;
});
/** The float types quantize and stats take as input. @type {Set<number>} */
const FLOATS = new Set(CODEC.filter((t) => t.blockSize === 1 && t.dequantize).map((t) => t.id));
// llama.cpp's general.file_type for a whole model in one format (llama.h, LLAMA_FTYPE_MOSTLY_*;
// one K type for every tensor is the _S mix for Q3_K, Q4_K and Q5_K). A format not listed gets no
// general.file_type (llama.cpp then guesses it from the tensors).
/** @type {Record<string, number>} */
const FILE_TYPE = {
  f32: 0,
  f16: 1,
  q4_0: 2,
  q4_1: 3,
  q8_0: 7,
  q5_0: 8,
  q5_1: 9,
  q2_K: 10,
  q3_K: 11,
  q4_K: 14,
  q5_K: 16,
  q6_K: 18,
  iq2_xxs: 19,
  iq2_xs: 20,
  iq3_xxs: 23,
  iq1_s: 24,
  iq4_nl: 25,
  iq3_s: 26,
  iq2_s: 28,
  iq4_xs: 30,
  iq1_m: 31,
  bf16: 32,
  tq1_0: 36,
  tq2_0: 37,
};
/** @param {Format[]} list */
const names = (list) => list.map((t) => t.name).join(', ');
/**
 * A list of formats for the help, wrapped at 100 columns under a 17-column indent.
 * @param {Format[]} list
 */
function wrapped(list) {
  const lines = [''];
  for (const [i, t] of list.entries()) {
    const item = t.name + (i < list.length - 1 ? ',' : '');
    if (lines[lines.length - 1] && 17 + lines[lines.length - 1].length + 1 + item.length > 100) lines.push('');
    lines[lines.length - 1] += (lines[lines.length - 1] ? ' ' : '') + item;
  }
  return lines.join(`\n${' '.repeat(17)}`);
}

/**
 * The format of the table a user named (any case), if it is in `list`.
 * @param {string} name @param {Format[]} list
 */
function formatIn(name, list) {
  let id;
  try {
    id = typeId(name);
  } catch {
    return undefined;
  }
  return list.find((t) => t.id === id);
}

/**
 * Where a float tensor whose rows (ne0 values) are not whole blocks of `target` goes: llama.cpp's
 * fallback format for the target if its blocks fit the rows, else null (the tensor then stays as
 * it is).
 * @param {Format} target @param {number} ne0
 */
function fallbackFor(target, ne0) {
  const f = FALLBACKS.find((t) => t.name === FALLBACK_OF[target.name]);
  return f && ne0 % f.blockSize === 0 ? f : null;
}
// ggml's GGML_QNT_VERSION, which llama.cpp's quantizer writes as general.quantization_version.
const QNT_VERSION = 2;
// Exit status after a signal stopped a write: 128 + the signal's number, as a shell reports it.
const SIGNAL_STATUS = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

const EXIT_STATUS = `exit status: 0 ok (also when the reader of the output went away, as in | head);
  1 failure (the message names the file); 2 bad usage, or OUT refused (it is IN, it exists and
  --force was not given, or it is not a regular file); 130, 143, 129 when SIGINT, SIGTERM or
  SIGHUP stopped a write (nothing is left under OUT or under a temporary name).`;

/** The block sizes of the model formats and the fallbacks, for quantize's help. */
function blockSizes() {
  const sizes = [...new Set(MODEL_FORMATS.map((t) => t.blockSize))].sort((a, b) => b - a);
  const min = sizes[sizes.length - 1];
  return `  blocks of ${sizes.map((n) => `${n}: ${names(MODEL_FORMATS.filter((t) => t.blockSize === n))}`).join('\n  blocks of ')}
  rows of a multiple of ${min} only: ${MODEL_FORMATS.filter((t) => t.blockSize > min)
    .map((t) => `${t.name} -> ${fallbackFor(t, min)?.name ?? 'kept'}`)
    .join(', ')}`;
}

/** @type {Record<string, Command>} */
const COMMANDS = {
  inspect: {
    usage: 'inspect FILE [--json]',
    about: 'header, metadata, tensor table, totals per type',
    positionals: ['FILE'],
    options: { json: { type: 'boolean' } },
    details: '  --json         everything as one JSON document (64-bit integers as strings)\n',
    run: inspect,
  },
  dump: {
    usage: 'dump FILE TENSOR [--rows A:B]',
    about: 'dequantized values, one row per line',
    positionals: ['FILE', 'TENSOR'],
    options: { rows: { type: 'string' } },
    details: '  --rows A:B     rows A (included) to B (excluded) only\n',
    run: dump,
  },
  stats: {
    usage: 'stats FILE [--tensor NAME] [--as T,...]',
    about: 'error of quantizing each F32/F16/BF16 tensor',
    positionals: ['FILE'],
    options: { tensor: { type: 'string' }, as: { type: 'string' } },
    details: `  --tensor NAME  that tensor only
  --as T,...     the formats to try (default ${STATS_DEFAULT.map((t) => t.name).join(',')};
                 any of ${wrapped(STATS_FORMATS)})

Per tensor and format: bits per weight, RMSE and max |err| over the tensor, SNR, and the RMSE of
the worst block and of the worst sub-block (formats with sub-block scales; '-' otherwise). A
format whose blocks do not fit the tensor's rows (ne0) gets a line saying so.
`,
    run: stats,
  },
  quantize: {
    usage: 'quantize IN OUT --type T [--keep-1d f32] [--force]',
    about: 'requantize the float tensors of a model to T, streaming',
    positionals: ['IN', 'OUT'],
    options: { type: { type: 'string' }, 'keep-1d': { type: 'string' }, force: { type: 'boolean' } },
    details: `  --type T       float tensors of 2+ dimensions whose rows (ne0 values) are whole blocks
                 of T become T; 1-D and quantized tensors are copied as they are. T is
                 one of (any case):
                 ${wrapped(MODEL_FORMATS)}
  --keep-1d f32  store 1-D float tensors (norms, biases) as F32
  --force        replace OUT if it exists (never when it is IN, by any name)

Rows that are not whole blocks of T: the tensor becomes llama.cpp's fallback format for T when
its blocks fit the rows, or else stays in its float type. Each tensor is listed with what it became
and why.
${blockSizes()}
general.file_type and general.quantization_version are set as llama.cpp sets them.
OUT is written under a temporary name beside it (.OUT.<random>.tmp), flushed, then renamed into
place; on an error or a signal the temporary file is removed and OUT is left as it was.
`,
    run: quantize,
  },
};

const HELP = `usage: blockquant <command> [options]       blockquant <command> --help: that command

commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}\n      ${c.about}\n`)
  .join('')}
options:
  -h, --help     this help
  --version      the version
Options take their value as --opt VALUE or --opt=VALUE.

${EXIT_STATUS}
`;

/** @param {string} name */
const commandHelp = (name) =>
  `usage: blockquant ${COMMANDS[name].usage}\n\n${COMMANDS[name].about}\n\noptions:\n  -h, --help     this help\n${COMMANDS[name].details}\n${EXIT_STATUS}\n`;

/** Bad usage: exit 2 with the message and the help of `command` (all commands when undefined). */
class Usage extends Error {
  /** @param {string} message @param {string} [command] */
  constructor(message, command) {
    super(message);
    this.command = command;
  }
}

/** An output refused because writing it could destroy a file: exit 2, no help. */
class Refused extends Error {
  /** @param {string} file @param {string} message */
  constructor(file, message) {
    super(message);
    this.file = file;
  }
}

/** A signal stopped a write (after its temporary file was removed). */
class Interrupted extends Error {
  /** @param {keyof typeof SIGNAL_STATUS} signal @param {string} what */
  constructor(signal, what) {
    super(`interrupted by ${signal}; ${what}`);
    this.status = SIGNAL_STATUS[signal];
  }
}

/** The reader of stdout went away (EPIPE): stop quietly. */
class ReaderGone extends Error {}

/**
 * Names the file an error is about, unless an inner step already did.
 * @param {unknown} e
 * @param {string} file
 */
function tag(e, file) {
  if (e && typeof e === 'object' && !('file' in e)) /** @type {any} */ (e).file = file;
  return e;
}

/**
 * @template T
 * @param {string} file
 * @param {() => Promise<T>} step
 * @returns {Promise<T>}
 */
async function about(file, step) {
  try {
    return await step();
  } catch (e) {
    throw tag(e, file);
  }
}

/**
 * An error as one line: Node's system errors as their text and code, without the syscall and
 * path Node appends (the file is named in front instead).
 * @param {unknown} e
 */
function describe(e) {
  if (e instanceof GGUFError) return `${e.message} [${e.code}]`;
  const x = /** @type {{ message?: unknown, code?: unknown, syscall?: unknown }} */ (e ?? {});
  if (typeof x.message !== 'string') return String(e);
  if (typeof x.code === 'string' && typeof x.syscall === 'string' && x.message.startsWith(`${x.code}: `)) {
    const text = x.message.slice(x.code.length + 2);
    const cut = text.indexOf(`, ${x.syscall}`);
    return `${cut >= 0 ? text.slice(0, cut) : text} (${x.code})`;
  }
  return x.message;
}

// The first error each output stream reported ('error' events arrive after the write that failed).
/** @type {WeakMap<object, Error | null>} */
const streamErrors = new WeakMap();

/** Listens for errors on a Node stream (EPIPE, ENOSPC, ...) so they never crash the process. */
/** @param {Out} stream */
function watch(stream) {
  const s = /** @type {any} */ (stream);
  if (typeof s.on !== 'function' || streamErrors.has(s)) return;
  streamErrors.set(s, null);
  s.on('error', (/** @type {Error} */ e) => {
    if (!streamErrors.get(s)) streamErrors.set(s, e);
  });
}

/** Throws what went wrong on stdout: ReaderGone for EPIPE, the error (naming stdout) otherwise. */
/** @param {Out} stream */
function checkStream(stream) {
  const s = /** @type {any} */ (stream);
  const e = streamErrors.get(s) ?? s.errored;
  if (!e) return;
  if (e.code === 'EPIPE') throw new ReaderGone();
  throw tag(e, 'stdout');
}

/** Waits until what was written to a Node stream has been handed to the OS (or failed). */
/** @param {Out} stream */
async function drain(stream) {
  const s = /** @type {any} */ (stream);
  if (typeof s.writableLength !== 'number' || s.destroyed) return;
  await new Promise((resolve) => s.write('', () => resolve(undefined)));
}

/**
 * Runs the CLI with `args` (without node and the script), writing to io.out and io.err (Node
 * streams or any `{ write(s) }`). Returns the exit status: 0 ok, also when the reader of io.out
 * went away (EPIPE); 1 failure, the message naming the file; 2 bad usage or a refused output;
 * 129/130/143 when SIGHUP/SIGINT/SIGTERM stopped a write. Throws nothing.
 * @param {string[]} args
 * @param {{ out: Out, err: Out }} io
 * @returns {Promise<number>}
 */
export async function main(args, io) {
  watch(io.out);
  watch(io.err);
  const print = (/** @type {string} */ s) => {
    checkStream(io.out);
    io.out.write(s + '\n');
  };
  const [cmd, ...rest] = args;
  try {
    const status = await dispatch(cmd, rest, print, io.err);
    await drain(io.out);
    checkStream(io.out);
    return status;
  } catch (e) {
    if (e instanceof ReaderGone) return 0;
    if (e instanceof Usage) {
      io.err.write(`blockquant: ${e.message}\n\n${e.command ? commandHelp(e.command) : HELP}`);
      return 2;
    }
    const file = /** @type {any} */ (e)?.file;
    const msg = describe(e);
    // Sources name themselves in their messages too: the file is named once.
    io.err.write(
      `blockquant: ${file ? `${file}: ` : ''}${file && msg.startsWith(`${file}: `) ? msg.slice(file.length + 2) : msg}\n`,
    );
    return e instanceof Refused ? 2 : e instanceof Interrupted ? e.status : 1;
  }
}

/**
 * @param {string | undefined} cmd
 * @param {string[]} args
 * @param {(s: string) => void} print
 * @param {Out} err
 */
async function dispatch(cmd, args, print, err) {
  if (cmd === undefined) throw new Usage('no command');
  if (cmd === '--help' || cmd === '-h' || (cmd === 'help' && args.length === 0)) {
    print(HELP.trimEnd());
    return 0;
  }
  if (cmd === '--version') {
    // package.json sits one level above js/ in the repository and in an installed package.
    print(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
    return 0;
  }
  if (cmd === 'help') {
    if (!Object.hasOwn(COMMANDS, args[0]) || args.length > 1) throw new Usage(`no help on ${args.join(' ')}`);
    print(commandHelp(args[0]).trimEnd());
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, cmd))
    throw new Usage(cmd.startsWith('-') ? `unknown option '${cmd}'` : `unknown command ${JSON.stringify(cmd)}`);
  const c = COMMANDS[cmd];
  /** @type {{ values: Values, positionals: string[] }} */
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...c.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    const x = /** @type {{ code?: string, message: string }} */ (e);
    const option = /'([^']*)'/.exec(x.message)?.[1];
    throw new Usage(
      x.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option
        ? `unknown option '${option}'`
        : x.message.charAt(0).toLowerCase() + x.message.slice(1),
      cmd,
    );
  }
  if (parsed.values.help) {
    print(commandHelp(cmd).trimEnd());
    return 0;
  }
  if (parsed.positionals.length !== c.positionals.length)
    throw new Usage(`${cmd} takes ${c.positionals.join(' and ')}`, cmd);
  return c.run(parsed.positionals, parsed.values, print, err);
}

/** A progress bar on a terminal (nothing when stderr is not a TTY). */
/** @param {Out} err @param {number} done @param {number} total */
function progress(err, done, total) {
  if (!err.isTTY || total === 0) return;
  err.write(
    `\r[${'#'.repeat(Math.round((30 * done) / total)).padEnd(30)}] ${((100 * done) / total).toFixed(0)}%${done === total ? '\n' : ''}`,
  );
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
 * Opens the GGUF file at `path` for reading, refusing what is not a regular file (a directory, a
 * FIFO, a device: GGUF needs random access to a fixed size). Errors name the file.
 * @param {string} path
 */
async function openInput(path) {
  return about(path, async () => {
    const st = await stat(path);
    if (!st.isFile()) throw new Error(st.isDirectory() ? 'is a directory' : 'is not a regular file');
    return { st, f: await openGGUF(path) };
  });
}

/** @type {Command['run']} */
async function inspect(pos, opt, print) {
  const { f } = await openInput(pos[0]);
  try {
    const totals = new Map();
    // A type id blockquant does not know is listed as unknown(N), its size as null (JSON) or '?'.
    for (const t of f.tensors) {
      const name = tensorTypeName(t);
      const e = totals.get(name) ?? { tensors: 0, elements: 0, bytes: 0 };
      e.tensors++;
      e.elements += t.nElements;
      e.bytes += t.byteLength ?? 0;
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
              type: tensorTypeName(t),
              dims: t.dims,
              offset: t.offset,
              bytes: t.byteLength,
              ...(t.unreadable ? { unreadable: t.unreadable.message } : {}),
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
    const tw = Math.max(7, ...f.tensors.map((t) => tensorTypeName(t).length));
    print(
      `  ${'name'.padEnd(w)}  ${'type'.padEnd(tw)}  ${'shape'.padEnd(23)}  ${'bytes'.padStart(12)}  ${'offset'.padStart(13)}`,
    );
    for (const t of f.tensors) {
      print(
        `  ${t.name.padEnd(w)}  ${tensorTypeName(t).padEnd(tw)}  ${shape(t.dims).padEnd(23)}  ${String(t.byteLength ?? '?').padStart(12)}  ${String(t.offset).padStart(13)}`,
      );
    }
    print('\ntotals per type:');
    for (const [name, e] of totals)
      print(
        `  ${name.padEnd(tw)}  ${e.tensors} tensors, ${e.elements} elements, ${name.startsWith('unknown(') ? '?' : e.bytes} bytes`,
      );
    const unreadable = f.tensors.filter((t) => t.unreadable);
    if (unreadable.length) {
      print('\nnot readable:');
      for (const t of unreadable) print(`  ${/** @type {{ message: string }} */ (t.unreadable).message}`);
    }
    return 0;
  } finally {
    await f.close();
  }
}

/** @type {Command['run']} */
async function dump(pos, opt, print) {
  let a = 0,
    b = Infinity;
  if (typeof opt.rows === 'string') {
    const m = /^(\d+):(\d+)$/.exec(opt.rows);
    if (!m) throw new Usage('--rows takes A:B', 'dump');
    [a, b] = [Number(m[1]), Number(m[2])];
    if (a > b) throw new Usage(`--rows ${opt.rows}: A is past B`, 'dump');
  }
  const { f } = await openInput(pos[0]);
  try {
    const t = f.tensors.find((x) => x.name === pos[1]);
    if (!t) throw tag(new Error(`no tensor named ${JSON.stringify(pos[1])}`), pos[0]);
    const rowLen = t.dims[0] ?? 1;
    b = Math.min(b, t.nElements / rowLen);
    const bq = await init();
    const chunk = Math.max(1, Math.floor((1 << 20) / rowLen));
    for (let r = a; r < b; r += chunk) {
      const k = Math.min(chunk, b - r);
      const v = await about(pos[0], () => bq.dequantizeRows(f, t.name, r, k));
      // Integer tensors decode to their own typed arrays (I64 to BigInt64Array): print any of them.
      const row = (/** @type {number} */ i) =>
        /** @type {ArrayLike<number | bigint>} */ (v.subarray(i * rowLen, (i + 1) * rowLen));
      for (let i = 0; i < k; i++) print(Array.from(row(i), (x) => `${x}`).join(' '));
    }
    return 0;
  } finally {
    await f.close();
  }
}

/** @type {Command['run']} */
async function stats(pos, opt, print, err) {
  /** @type {Format[]} */
  const formats = [];
  for (const name of typeof opt.as === 'string' ? opt.as.split(',') : STATS_DEFAULT.map((t) => t.name)) {
    const t = formatIn(name, STATS_FORMATS);
    if (!t) throw new Usage(`--as: ${name} is not one of ${names(STATS_FORMATS)}`, 'stats');
    formats.push(t);
  }
  const { f } = await openInput(pos[0]);
  try {
    const bq = await init();
    const chosen = f.tensors.filter((t) => FLOATS.has(t.type) && (opt.tensor === undefined || t.name === opt.tensor));
    if (opt.tensor !== undefined && chosen.length === 0)
      throw tag(new Error(`no F32/F16/BF16 tensor named ${JSON.stringify(opt.tensor)}`), pos[0]);
    const total = chosen.reduce((s, t) => s + t.nElements, 0);
    let done = 0;
    print(
      `${'tensor'.padEnd(32)} ${'format'.padEnd(7)} bits/w   RMSE         max |err|    SNR dB   worst block  worst sub`,
    );
    const e = (/** @type {number} */ v) => v.toExponential(4);
    for (const t of chosen) {
      // chosen holds float tensors only, which decode to Float32Array.
      const x = /** @type {Float32Array} */ (await about(pos[0], () => bq.dequantizeTensor(f, t.name)));
      const ne0 = t.dims[0] ?? 1;
      let signal = 0;
      for (const v of x) signal += v * v;
      for (const fmt of formats) {
        const head = `${t.name.padEnd(32)} ${fmt.name.padEnd(7)}`;
        if (ne0 % fmt.blockSize !== 0) {
          print(`${head} rows of ${ne0} are not whole blocks of ${fmt.blockSize}`);
          continue;
        }
        const m = errors(bq, fmt, x);
        const snr = m.se === 0 ? Infinity : 10 * Math.log10(signal / m.se);
        print(
          `${head} ${bitsPerWeight(fmt).toFixed(2).padStart(6)}   ${e(Math.sqrt(m.se / x.length))}   ${e(m.max)}   ${snr.toFixed(2).padStart(7)}   ${m.block < 0 ? '-'.padEnd(10) : e(m.block)}   ${m.sub < 0 ? '-' : e(m.sub)}`,
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

/**
 * The error of quantizing x to fmt: the sum of squared errors, the largest |error|, and the RMSE
 * of the worst block and sub-block (-1 when the format has none). Block formats from their block
 * statistics; float formats (one value per "block") by a round trip.
 * @param {import('./codec.js').Codec} bq @param {Format} fmt @param {Float32Array} x
 */
function errors(bq, fmt, x) {
  let se = 0,
    max = 0,
    block = -1,
    sub = -1;
  if (fmt.blockSize === 1) {
    const y = bq.dequantize(fmt.id, bq.quantize(fmt.id, x));
    for (let i = 0; i < x.length; i++) {
      const d = Math.abs(x[i] - y[i]);
      se += d * d;
      max = Math.max(max, d);
    }
    return { se, max, block, sub };
  }
  const s = bq.blockStats(fmt.id, x);
  for (let b = 0; b < s.rmse.length; b++) {
    se += s.rmse[b] * s.rmse[b] * fmt.blockSize;
    max = Math.max(max, s.maxAbs[b]);
    block = Math.max(block, s.rmse[b]);
  }
  if (s.sub) for (const r of s.sub.rmse) sub = Math.max(sub, r);
  return { se, max, block, sub };
}

/**
 * The metadata of a model quantized to `type`: general.file_type and general.quantization_version
 * as llama.cpp's quantizer writes them (UINT32), each replacing the input's entry in place or,
 * when the input has none, added after its last general.* key. For a format without a llama.cpp
 * file type, the input's general.file_type is dropped (it would name another format).
 * @param {import('./gguf-format.js').KV[]} kv
 * @param {string} type the format's name
 */
function quantizedKV(kv, type) {
  const set = [
    ...(Object.hasOwn(FILE_TYPE, type)
      ? [{ key: 'general.file_type', type: GGUFValueType.UINT32, value: FILE_TYPE[type] }]
      : []),
    { key: 'general.quantization_version', type: GGUFValueType.UINT32, value: QNT_VERSION },
  ];
  const out = kv
    .filter((e) => e.key !== 'general.file_type' || set.some((s) => s.key === e.key))
    .map((e) => set.find((s) => s.key === e.key) ?? e);
  const missing = set.filter((s) => !kv.some((e) => e.key === s.key));
  let at = 0;
  kv.forEach((e, i) => {
    if (e.key.startsWith('general.')) at = i + 1;
  });
  out.splice(at, 0, ...missing);
  return out;
}

/** @type {Command['run']} */
async function quantize(pos, opt, print, err) {
  const [inPath, outPath] = pos;
  const target = typeof opt.type === 'string' ? formatIn(opt.type, MODEL_FORMATS) : undefined;
  if (!target) throw new Usage(`--type must be one of ${names(MODEL_FORMATS)}`, 'quantize');
  if (opt['keep-1d'] !== undefined && opt['keep-1d'] !== 'f32') throw new Usage('--keep-1d takes f32', 'quantize');
  // The input's device and inode tell whether OUT is the same file. (Were the path swapped
  // between the stat and the open, OUT would still be written whole from the open input.)
  const { st: input, f } = await openInput(inPath);
  try {
    const job = {
      inPath,
      outPath,
      input,
      target,
      keep1d: opt['keep-1d'] === 'f32',
      force: opt.force === true,
    };
    return await quantizeTo(f, job, print, err);
  } finally {
    await f.close();
  }
}

/**
 * quantize, once the input is open: plans the tensors, writes OUT through writeOutput.
 * @param {Awaited<ReturnType<typeof openGGUF>>} f the input
 * @param {{ inPath: string, outPath: string, input: { dev: number, ino: number }, target: Format,
 *   keep1d: boolean, force: boolean }} job `input`: the input's device and inode
 * @param {(s: string) => void} print
 * @param {Out} err
 */
async function quantizeTo(f, job, print, err) {
  const { inPath, outPath, input, target } = job;
  // A tensor whose type is unknown (or Q2_0 in the pre-release layout) cannot be copied: refuse
  // the file before writing anything, rather than write a model without it.
  for (const t of f.tensors)
    if (t.unreadable) throw tag(new GGUFError(t.unreadable.code, t.unreadable.offset, t.unreadable.message), inPath);
  const bq = await init();
  const plan = f.tensors.map((t) => {
    const { to, why } = planTensor(t, target, job.keep1d);
    const info = typeInfo(to);
    return { t, to, why, byteLength: (t.nElements / info.blockSize) * info.typeSize };
  });
  const { header, offsets, alignment } = await about(inPath, async () =>
    writeGGUFHeader({
      kv: quantizedKV(f.kv, target.name),
      alignment: f.alignment,
      tensors: plan.map((p) => ({ name: p.t.name, type: p.to, dims: p.t.dims, byteLength: p.byteLength })),
    }),
  );
  await writeOutput(outPath, { force: job.force, input }, async (out, check) => {
    await writeAll(out, header, 0);
    const total = plan.reduce((s, p) => s + p.t.nElements, 0);
    let done = 0;
    for (let i = 0; i < plan.length; i++) {
      const { t, to } = plan[i];
      const rowLen = t.dims[0] ?? 1;
      const nRows = t.nElements / rowLen;
      const rowsPer = Math.max(1, Math.floor((8 << 20) / (rowLen * 4))); // ~8 MB of f32 at a time
      let at = header.length + offsets[i];
      for (let r = 0; r < nRows; r += rowsPer) {
        check();
        const k = Math.min(rowsPer, nRows - r);
        const bytes = await about(inPath, async () => {
          // Only float tensors are converted (the plan keeps every other type), and they decode to f32.
          if (to !== t.type)
            return bq.quantize(to, /** @type {Float32Array} */ (await bq.dequantizeRows(f, t.name, r, k)));
          const raw = await f.readRows(t.name, r, k);
          return f.littleEndian ? raw : toLittleEndian(t.type, raw);
        });
        await writeAll(out, bytes, at);
        at += bytes.length;
      }
      const padTo = header.length + offsets[i] + Math.ceil(plan[i].byteLength / alignment) * alignment;
      if (padTo > at) await writeAll(out, new Uint8Array(padTo - at), at);
      done += t.nElements;
      progress(err, done, total);
    }
  });
  const w = Math.max(4, ...plan.map((p) => p.t.name.length));
  /** @type {Map<string, number>} */
  const others = new Map();
  for (const { t, to, why } of plan) {
    const from = typeInfo(t.type).name;
    const did = to === t.type ? `${from} kept` : `${from} -> ${typeInfo(to).name}`;
    print(`  ${t.name.padEnd(w)}  ${why ? `${did.padEnd(16)}  (${why})` : did}`);
    if (to !== t.type && to !== target.id) others.set(typeInfo(to).name, (others.get(typeInfo(to).name) ?? 0) + 1);
  }
  const converted = plan.filter((p) => p.to === target.id && p.t.type !== target.id).length;
  print(
    `${outPath}: ${converted} of ${plan.length} tensors converted to ${target.name}${[...others].map(([n, k]) => `, ${k} to ${n}`).join('')}`,
  );
  return 0;
}

/**
 * What quantize does with one tensor: a float tensor of 2+ dimensions becomes `target` when its
 * rows (ne0 values) are whole blocks of it, else the fallback format (fallbackFor), else stays;
 * a 1-D float tensor stays (or becomes F32 with --keep-1d f32); any other tensor is copied.
 * @param {import('./gguf-format.js').TensorInfo} t @param {Format} target @param {boolean} keep1d
 * @returns {{ to: number, why: string }} the type written, and why it is not `target` ('' if it is)
 */
function planTensor(t, target, keep1d) {
  if (!FLOATS.has(t.type))
    return { to: t.type, why: typeInfo(t.type).blockSize > 1 ? 'already quantized' : 'not a float tensor' };
  if (t.dims.length <= 1) return { to: keep1d ? GGMLType.F32 : t.type, why: keep1d ? '1-D, --keep-1d f32' : '1-D' };
  const ne0 = t.dims[0];
  if (ne0 % target.blockSize === 0) return { to: target.id, why: '' };
  const fb = fallbackFor(target, ne0);
  if (fb) return { to: fb.id, why: `rows of ${ne0} are not whole ${target.name} blocks of ${target.blockSize}` };
  return { to: t.type, why: `rows of ${ne0} are not whole blocks of any format` };
}

/**
 * Writes all of `bytes` at `position` (a write may take fewer bytes than asked).
 * @param {import('node:fs/promises').FileHandle} fh @param {Uint8Array} bytes @param {number} position
 */
async function writeAll(fh, bytes, position) {
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.length - done, position + done);
    if (bytesWritten <= 0) throw new Error('the file system took no bytes');
    done += bytesWritten;
  }
}

// Temporary files being written, removed synchronously if a second signal ends the process at once.
/** @type {Set<string>} */
const pending = new Set();

/** Error codes of link() on file systems without hard links (then: check, and rename). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV']);
/** Error codes of fsync on a directory where the platform does not allow it (Windows, some FS). */
const NO_DIR_SYNC = new Set(['EISDIR', 'EINVAL', 'EPERM', 'EBADF', 'EACCES', 'ENOTSUP', 'EOPNOTSUPP']);

/**
 * stat or lstat, null when nothing is there.
 * @param {string} path @param {typeof stat} how
 */
async function statOrNull(path, how) {
  try {
    return await how(path);
  } catch (e) {
    if (/** @type {any} */ (e).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * Catches SIGINT, SIGTERM and SIGHUP while a temporary file exists: the first asks the write to
 * stop (check() throws Interrupted at the next step, and the file is removed on the way out); a
 * second removes the temporary files synchronously and exits at once.
 */
function trapSignals() {
  /** @type {keyof typeof SIGNAL_STATUS | null} */
  let got = null;
  const on = (/** @type {keyof typeof SIGNAL_STATUS} */ signal) => {
    if (got) {
      for (const p of pending) {
        try {
          unlinkSync(p);
        } catch {
          // already gone
        }
      }
      process.exit(SIGNAL_STATUS[signal]);
    }
    got = signal;
  };
  const signals = /** @type {(keyof typeof SIGNAL_STATUS)[]} */ (Object.keys(SIGNAL_STATUS));
  for (const s of signals) process.on(s, on);
  return {
    get signal() {
      return got;
    },
    check() {
      if (got) throw new Interrupted(got, 'nothing was written');
    },
    release() {
      for (const s of signals) process.off(s, on);
    },
  };
}

/**
 * Writes the file `path` through `fill(fh, check)`, which writes into an empty temporary file beside
 * it and calls check() between steps. The temporary file is created exclusively (mode 0666 less the
 * umask, as any new file), fsynced, and then moved to `path`: with --force by rename (atomic
 * replace), without it by link (which fails if `path` appeared meanwhile). The directory is fsynced
 * where the platform allows. Refuses (Refused) when `path` is the input (same device and inode,
 * whatever the spelling, link or symlink), is not a regular file, or exists without `force`. On
 * any error or signal the temporary file is removed and `path` is untouched. Errors name `path`.
 * @param {string} path
 * @param {{ force: boolean, input: { dev: number, ino: number } }} options
 * @param {(fh: import('node:fs/promises').FileHandle, check: () => void) => Promise<void>} fill
 */
async function writeOutput(path, { force, input }, fill) {
  // What `path` leads to (through symlinks), and whether a name is there at all (a dangling symlink).
  const target = await about(path, () => statOrNull(path, stat));
  const entry = await about(path, () => statOrNull(path, lstat));
  if (target && target.dev === input.dev && target.ino === input.ino)
    throw new Refused(path, 'is the input file; write the output to another file');
  if (target && !target.isFile()) throw new Refused(path, 'exists and is not a regular file');
  if (entry && !force) throw new Refused(path, 'exists; --force replaces it');
  const trap = trapSignals();
  /** @type {string | null} */
  let tmp = null;
  /** @type {import('node:fs/promises').FileHandle | null} */
  let fh = null;
  try {
    for (let attempt = 0; !fh; attempt++) {
      const name = join(dirname(path), `.${basename(path).slice(0, 64)}.${randomBytes(6).toString('hex')}.tmp`);
      try {
        fh = await openFile(name, 'wx', 0o666);
      } catch (e) {
        if (/** @type {any} */ (e).code !== 'EEXIST' || attempt >= 10) throw e;
        continue;
      }
      tmp = name;
      pending.add(tmp);
    }
    await fill(fh, trap.check);
    await fh.sync();
    await fh.close();
    fh = null;
    trap.check();
    await place(/** @type {string} */ (tmp), path, force);
    pending.delete(/** @type {string} */ (tmp));
    tmp = null;
    await syncDir(dirname(path));
  } catch (e) {
    throw tag(e, path);
  } finally {
    if (fh) await fh.close().catch(() => {});
    if (tmp) {
      await unlink(tmp).catch(() => {});
      pending.delete(tmp);
    }
    trap.release();
  }
  if (trap.signal) throw tag(new Interrupted(trap.signal, 'the output was written whole'), path);
}

/**
 * Moves the complete temporary file `tmp` to `path`; without `force`, never over an existing file.
 * @param {string} tmp @param {string} path @param {boolean} force
 */
async function place(tmp, path, force) {
  if (force) return rename(tmp, path);
  try {
    await link(tmp, path);
  } catch (e) {
    const code = /** @type {any} */ (e).code;
    if (code === 'EEXIST') throw new Refused(path, 'exists; --force replaces it');
    if (!NO_HARD_LINKS.has(code)) throw e;
    // No hard links here: check, then rename (a window between the two instead of none).
    if (await statOrNull(path, lstat)) throw new Refused(path, 'exists; --force replaces it');
    return rename(tmp, path);
  }
  await unlink(tmp);
}

/** fsyncs a directory so a rename in it survives a crash, where the platform allows it. */
/** @param {string} dir */
async function syncDir(dir) {
  /** @type {import('node:fs/promises').FileHandle | undefined} */
  let d;
  try {
    d = await openFile(dir, 'r');
    await d.sync();
  } catch (e) {
    if (!NO_DIR_SYNC.has(/** @type {any} */ (e).code)) throw e;
  } finally {
    await d?.close();
  }
}
