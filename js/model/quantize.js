// The model pipeline: llama-quantize's output file, streamed. planQuantize gives the plan
// (recipe.js's planFor: every tensor's type, sizes, offsets, the header) without writing;
// quantizeModel writes the file it describes to a sink (js/gguf/sinks.js) front to back: the
// header first, then each tensor, read a few rows at a time, decoded to f32 as llama decodes
// F16/BF16 (and, requantizing, quantized types) first, quantized with the tensor's importance
// weights (one set per expert matrix of a 3-D tensor), written, and padded to the alignment. The
// bytes equal llama_model_quantize's for the same input and options (tests/model-quantize.test.js);
// memory is bounded by the chunk of rows in flight, not by the tensor or the model.
//
// Each package entry point binds these to its own init, openGGUF and readImatrix (an Env), so
// that Node's accepts paths and FileHandles and the browser's Blobs and URLs.

import { GGMLType as T, typeInfo } from '../types.js';
import { VT } from '../gguf-format.js';
import { writeGGUFHeader } from '../gguf-write.js';
import { toLittleEndian } from '../byteswap.js';
import { toSink } from '../gguf/sinks.js';
import { planFor } from './recipe.js';
import { ALIGNMENT } from './header.js';
import { PlanError } from './errors.js';
import { invalidBlock } from './validate.js';

/** @typedef {import('./recipe.js').QuantizePlan} QuantizePlan */
/** @typedef {import('./recipe.js').PlanTensor} PlanTensor */
/** @typedef {import('../gguf/sinks.js').Sink} Sink */
/** @typedef {import('../gguf/sinks.js').SinkTarget} SinkTarget */

/**
 * What onProgress is told after each chunk written: the tensor being written (its output name)
 * and its index in the plan, the plan's tensor count, the input data bytes read so far and the
 * output bytes written so far (header and padding included) of `total` (the plan's totalBytes),
 * and the seconds left at the rate so far (null before the first tensor data is done). bytesIn
 * and bytesOut only grow; the last call has bytesOut === total.
 * @typedef {{ tensor: string, index: number, count: number, bytesIn: number, bytesOut: number,
 *   total: number, etaSeconds: number | null }} Progress
 */

/**
 * The codec calls the pipeline makes: a Codec's (synchronous) or a ThreadedCodec's (Promises).
 * @typedef {{ quantize(type: number, values: Float32Array, options: { imatrix?: Float32Array, rowLength?: number }):
 *   Uint8Array | Promise<Uint8Array>, dequantize(type: number, bytes: Uint8Array, out?: Float32Array): Float32Array | Promise<Float32Array>,
 *   close?: () => Promise<void> }} PipelineCodec
 */

/**
 * Options of planQuantize and quantizeModel: planFor's (see recipe.js's PlanOptions), with the
 * importance matrix also given as any source readImatrix takes (read first; its name, when it is
 * a string or a File, becomes quantize.imatrix.file unless imatrixFile says otherwise), and:
 * @typedef {Omit<import('./recipe.js').PlanOptions, 'imatrix'> & {
 *   imatrix?: import('./imatrix.js').Imatrix | Map<string, Float32Array> | unknown,
 *   threads?: number, codec?: PipelineCodec, signal?: AbortSignal,
 *   onProgress?: (p: Progress) => void, force?: boolean }} QuantizeModelOptions
 * threads: quantize on this many threads (init({ threads })); codec: a codec of yours (init's),
 * used as it is and left open; signal: stops the work (the promise rejects with its reason and the
 * sinks are aborted); onProgress: see Progress; force: a path sink (Node) may replace an existing file.
 */

/**
 * What an entry point provides: its init, openGGUF and readImatrix, and (Node) a way to turn other
 * sink values (paths) into sinks.
 * @typedef {{ init: (o?: any) => Promise<any>, openGGUF: (s: unknown, o?: any) => Promise<any>,
 *   readImatrix: (s: unknown, o?: any) => Promise<any>,
 *   sinks?: (sink: unknown, plan: QuantizePlan, file: unknown, o: QuantizeModelOptions) => Promise<Sink[] | null> }} Env
 */

/** f32 values per chunk of a converted tensor (4 MiB), and bytes per chunk of a copied one. */
const CHUNK_VALUES = 1 << 20;
const CHUNK_BYTES = 4 << 20;

/**
 * The plan for a model without writing anything: planFor on the source's header.
 * @param {Env} env
 * @param {unknown} source anything env.openGGUF takes, or a file it opened (or parseGGUF's result)
 * @param {QuantizeModelOptions} options
 * @returns {Promise<QuantizePlan>}
 * @throws {PlanError} as planFor; GGUFError for the source or the imatrix
 */
export async function planWith(env, source, options) {
  const o = checkOptions(options, false);
  const { file, close } = await openSource(env, source, o.signal);
  try {
    return planFor(file, await planOptions(env, o));
  } finally {
    await close();
  }
}

/**
 * Quantizes a model as llama_model_quantize does and writes the file (with keepSplit, one file
 * per input shard) to the sink(s).
 * @param {Env} env
 * @param {unknown} source anything env.openGGUF takes, or a file it opened (or parseGGUF's result)
 * @param {unknown} sink a SinkTarget, or one per output shard in an array (env.sinks may take more)
 * @param {QuantizeModelOptions} options
 * @returns {Promise<QuantizePlan>} the plan written
 * @throws {PlanError} as planFor, and UNSUPPORTED for a type blockquant cannot quantize to or
 *   decode from, BAD_OPTION for options or sinks that do not fit; GGUFError for the source or the
 *   imatrix; the sink's errors; the signal's reason
 */
export async function quantizeWith(env, source, sink, options) {
  const o = checkOptions(options, true);
  const { file, close } = await openSource(env, source, o.signal);
  /** @type {Sink[]} */
  let sinks = [];
  /** @type {PipelineCodec | null} */
  let own = null;
  try {
    const plan = planFor(file, await planOptions(env, o));
    checkSupported(plan);
    aborted(o.signal);
    sinks = (await env.sinks?.(sink, plan, file, o)) ?? toSinks(sink, plan.shards.length);
    const codec = o.codec ?? (own = await env.init(o.threads && o.threads > 1 ? { threads: o.threads } : {}));
    await write(file, plan, sinks, /** @type {PipelineCodec} */ (codec), o);
    for (const s of sinks) await s.close();
    aborted(o.signal); // the last moment a stop leaves nothing behind
    for (const s of sinks) await s.commit?.();
    sinks = [];
    return plan;
  } catch (e) {
    for (const s of sinks) await s.abort(e).catch(() => {});
    throw e;
  } finally {
    await own?.close?.();
    await close();
  }
}

/**
 * @param {unknown} options
 * @param {boolean} writing quantizeModel's (dryRun is planQuantize's business)
 * @returns {QuantizeModelOptions}
 */
function checkOptions(options, writing) {
  if (!options || typeof options !== 'object')
    throw new PlanError('BAD_OPTION', 'options must be an object ({ ftype, ... })');
  const o = /** @type {QuantizeModelOptions} */ (options);
  if (o.threads !== undefined && !(Number.isSafeInteger(o.threads) && o.threads >= 1))
    throw new PlanError('BAD_OPTION', `threads must be a positive integer, got ${String(o.threads)}`);
  if (o.codec !== undefined && (typeof o.codec?.quantize !== 'function' || typeof o.codec?.dequantize !== 'function'))
    throw new PlanError('BAD_OPTION', 'codec must be a codec from init()');
  if (o.codec !== undefined && o.threads !== undefined)
    throw new PlanError('BAD_OPTION', 'give threads or codec, not both (a codec has its threads)');
  if (writing && o.dryRun === true)
    throw new PlanError('BAD_OPTION', 'dryRun: quantizeModel writes the file; planQuantize is the dry run');
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function')
    throw new PlanError('BAD_OPTION', 'onProgress must be a function');
  const s = o.signal;
  if (s !== undefined && (!s || typeof s.aborted !== 'boolean' || typeof s.addEventListener !== 'function'))
    throw new PlanError('BAD_OPTION', 'signal must be an AbortSignal');
  aborted(s);
  return o;
}

/** Throws the signal's reason once it has aborted. @param {AbortSignal | undefined} signal */
function aborted(signal) {
  if (signal?.aborted) throw signal.reason;
}

/**
 * The source as an open file: an openGGUF or parseGGUF result as it is (the caller closes it),
 * anything else opened with env.openGGUF (and closed by the returned close()).
 * @param {Env} env @param {unknown} source @param {AbortSignal | undefined} signal
 */
async function openSource(env, source, signal) {
  const s = /** @type {any} */ (source);
  if (s && typeof s === 'object' && Array.isArray(s.tensors) && Array.isArray(s.kv))
    if (typeof s.readRows === 'function' || typeof s.tensorBytes === 'function')
      return { file: s, close: async () => {} };
  const f = await env.openGGUF(source, signal ? { signal } : {});
  return { file: f, close: async () => f.close?.() };
}

/**
 * planFor's options: the imatrix read when it is given as a source, its name as imatrixFile.
 * @param {Env} env @param {QuantizeModelOptions} o
 * @returns {Promise<import('./recipe.js').PlanOptions>}
 */
async function planOptions(env, o) {
  const im = /** @type {any} */ (o.imatrix);
  if (im === undefined || im === null || im instanceof Map || (typeof im === 'object' && im.entries instanceof Map))
    return /** @type {import('./recipe.js').PlanOptions} */ (o);
  const name = typeof im === 'string' ? im : typeof im?.name === 'string' ? im.name : undefined;
  const imatrix = await env.readImatrix(im, o.signal ? { signal: o.signal } : {});
  return {
    .../** @type {import('./recipe.js').PlanOptions} */ (o),
    imatrix,
    ...(o.imatrixFile === undefined && name !== undefined ? { imatrixFile: name } : {}),
  };
}

/**
 * Refuses, before anything is written, a plan with a conversion this build cannot do.
 * @param {QuantizePlan} plan
 */
function checkSupported(plan) {
  for (const t of plan.tensors) {
    if (t.to === t.from) continue;
    if (!typeInfo(t.to).quantize)
      throw new PlanError(
        'UNSUPPORTED',
        `${t.name}: blockquant cannot quantize to ${typeInfo(t.to).name} yet (the plan asks for it)`,
        t.name,
      );
    if (t.from !== T.F32 && !typeInfo(t.from).dequantize)
      throw new PlanError('UNSUPPORTED', `${t.name}: blockquant cannot decode ${typeInfo(t.from).name}`, t.name);
  }
}

/**
 * The sinks for the plan's shards: one target, or an array of one per shard.
 * @param {unknown} sink @param {number} n
 * @returns {Sink[]}
 */
function toSinks(sink, n) {
  const list = Array.isArray(sink) ? sink : [sink];
  if (list.length !== n)
    throw new PlanError(
      'BAD_OPTION',
      n > 1
        ? `keepSplit writes ${n} files: give an array of ${n} sinks`
        : `one output file: give one sink, not ${list.length}`,
    );
  return list.map((s, i) => toSink(/** @type {SinkTarget} */ (s), n > 1 ? `output shard ${i + 1}` : undefined));
}

/**
 * One output shard's header as llama writes it. llama aligns the data to 32 whatever the input's
 * general.alignment says (and copies that KV): the header is laid out with 32 and the KV's value
 * written back.
 * @param {QuantizePlan} plan @param {number} i
 */
function headerOf(plan, i) {
  const s = plan.shards[i];
  const ts = s.tensorIndexes.map((k) => plan.tensors[k]);
  const at = s.kv.findIndex((e) => e.key === 'general.alignment' && e.type === VT.UINT32);
  const said = at >= 0 ? Number(s.kv[at].value) : ALIGNMENT;
  const kv = said === ALIGNMENT ? s.kv : s.kv.map((e, k) => (k === at ? { ...e, value: ALIGNMENT } : e));
  const { header, offsets } = writeGGUFHeader({
    kv,
    tensors: ts.map((t) => ({ name: t.name, type: t.to, dims: t.dims, byteLength: t.bytesOut })),
  });
  if (said !== ALIGNMENT) {
    // The value follows the key's length (u64), its bytes and the type (u32).
    const key = new TextEncoder().encode('general.alignment');
    const pos = findKey(header, key);
    new DataView(header.buffer, header.byteOffset).setUint32(pos + 8 + key.length + 4, said, true);
  }
  if (header.length !== s.headerBytes || offsets.some((x, k) => x !== ts[k].offset))
    throw new Error(`blockquant: shard ${i}'s header does not match its plan (a bug)`);
  return header;
}

/** Where a key's length field starts in a header. @param {Uint8Array} h @param {Uint8Array} key */
function findKey(h, key) {
  outer: for (let i = 24; i + 8 + key.length <= h.length; i++) {
    if (h[i] !== key.length || h[i + 1] !== 0) continue;
    for (let j = 0; j < key.length; j++) if (h[i + 8 + j] !== key[j]) continue outer;
    return i;
  }
  throw new Error('blockquant: general.alignment not found in the header (a bug)');
}

/**
 * One step of the writing: a chunk of rows of one tensor (its data, converted or copied), with the
 * shard's header before it (the shard's first step) and the tensor's padding after (its last).
 * @typedef {{ shard: number, index: number, t: PlanTensor, first: number, count: number,
 *   imatrix: Float32Array | null, header: Uint8Array | null, pad: number }} Step
 */

/**
 * The steps of the whole plan, in output order.
 * @param {QuantizePlan} plan
 * @returns {Step[]}
 */
function stepsOf(plan) {
  /** @type {Step[]} */
  const steps = [];
  plan.shards.forEach((s, shard) => {
    let header = /** @type {Uint8Array | null} */ (headerOf(plan, shard));
    for (const index of s.tensorIndexes) {
      const t = plan.tensors[index];
      const ne = t.source.dims;
      const ne0 = ne[0] ?? 1;
      const rows = ne.slice(1).reduce((a, b) => a * b, 1);
      const pad = Math.ceil(t.bytesOut / ALIGNMENT) * ALIGNMENT - t.bytesOut;
      /** @type {Step[]} */
      const mine = [];
      if (t.to === t.from) {
        const rowBytes = rows > 0 ? t.bytesIn / rows : 0;
        const per = Math.max(1, Math.floor(CHUNK_BYTES / Math.max(1, rowBytes)));
        for (let r = 0; r < rows; r += per)
          mine.push({ shard, index, t, first: r, count: Math.min(per, rows - r), imatrix: null, header: null, pad: 0 });
      } else {
        // Matrix by matrix (a 3-D tensor's experts each have their own weights), chunks of rows.
        const ne1 = ne[1] ?? 1;
        const per = Math.max(1, Math.min(ne1, Math.floor(CHUNK_VALUES / Math.max(1, ne0))));
        for (let m = 0; m * ne1 < rows; m++) {
          const imatrix = t.imatrix ? t.imatrix[m % t.imatrix.length] : null;
          for (let r = 0; r < ne1; r += per)
            mine.push({
              shard,
              index,
              t,
              first: m * ne1 + r,
              count: Math.min(per, ne1 - r),
              imatrix,
              header: null,
              pad: 0,
            });
        }
      }
      if (mine.length === 0) mine.push({ shard, index, t, first: 0, count: 0, imatrix: null, header: null, pad: 0 });
      mine[0].header = header;
      header = null;
      mine[mine.length - 1].pad = pad;
      steps.push(...mine);
    }
  });
  return steps;
}

/**
 * Writes the plan's files: reads one chunk ahead and writes one chunk behind the one being
 * quantized, so the source, the codec and the sink work at once with three chunks in memory.
 * @param {any} file @param {QuantizePlan} plan @param {Sink[]} sinks @param {PipelineCodec} codec
 * @param {QuantizeModelOptions} o
 */
async function write(file, plan, sinks, codec, o) {
  const steps = stepsOf(plan);
  const started = Date.now();
  let bytesIn = 0;
  let bytesOut = 0;
  const zeros = new Uint8Array(ALIGNMENT);
  const scratch = { f32: new Float32Array(0) };
  /** A read started ahead: its failure is reported when it is awaited, not as unhandled. @param {Step} s */
  const read = (s) => {
    const p = readRows(file, s.t.source, s.first, s.count);
    p.catch(() => {});
    return p;
  };
  /** @type {Promise<Uint8Array> | null} */
  let next = steps.length ? read(steps[0]) : null;
  /** @type {Promise<void>} */
  let behind = Promise.resolve();
  try {
    for (let i = 0; i < steps.length; i++) {
      aborted(o.signal);
      const s = steps[i];
      const raw = await /** @type {Promise<Uint8Array>} */ (next);
      next = i + 1 < steps.length ? read(steps[i + 1]) : null;
      validate(s, s.t.from, raw, 'INVALID_DATA');
      const out = await convert(codec, s, raw, scratch);
      if (s.t.to !== s.t.from) validate(s, s.t.to, out, 'INVALID_OUTPUT');
      await behind;
      aborted(o.signal);
      const inBytes = raw.length;
      behind = (async () => {
        const sink = sinks[s.shard];
        if (s.header) await sink.write(s.header);
        if (out.length) await sink.write(out);
        if (s.pad) await sink.write(zeros.slice(0, s.pad));
        bytesIn += inBytes;
        bytesOut += (s.header?.length ?? 0) + out.length + s.pad;
        if (o.onProgress) {
          const done = plan.bytesIn ? bytesIn / plan.bytesIn : 1;
          const secs = (Date.now() - started) / 1000;
          o.onProgress({
            tensor: s.t.name,
            index: s.index,
            count: plan.tensors.length,
            bytesIn,
            bytesOut,
            total: plan.totalBytes,
            etaSeconds: bytesIn > 0 ? (secs / done) * (1 - done) : null,
          });
        }
      })();
      behind.catch(() => {}); // awaited before the next write; until then not unhandled
    }
    await behind;
  } finally {
    // A write still under way when a later step failed: let it settle before the sinks are aborted.
    await behind.catch(() => {});
  }
  if (bytesOut !== plan.totalBytes)
    throw new Error(`blockquant: wrote ${bytesOut} bytes, the plan has ${plan.totalBytes} (a bug)`);
}

/**
 * Refuses what llama_model_quantize refuses: input data (every tensor, as it is read) or quantized
 * data that ggml_validate_row_data rejects (a NaN or Inf value or scale; quantized scales overflow
 * when the values are too large for the type).
 * @param {Step} s @param {number} type @param {Uint8Array} bytes
 * @param {'INVALID_DATA' | 'INVALID_OUTPUT'} code
 */
function validate(s, type, bytes, code) {
  const bad = invalidBlock(type, bytes);
  if (!bad) return;
  const info = typeInfo(type);
  const perRow = Math.floor((s.t.source.dims[0] ?? 1) / info.blockSize);
  const block = s.first * perRow + bad.block;
  const what = bad.what === 'e' ? 'an exponent of 0xff' : `a ${bad.what === 'nan' ? 'NaN' : 'infinite'} value`;
  const where = info.blockSize > 1 ? `in block ${block} (${info.name})` : `at element ${block} (${info.name})`;
  if (code === 'INVALID_DATA')
    throw new PlanError(code, `tensor '${s.t.name}' has invalid data: ${what} ${where}`, s.t.name);
  throw new PlanError(
    code,
    `${s.t.name}: quantized data validation failed: ${what} ${where} (the values are too large for ${info.name})`,
    s.t.name,
  );
}

/**
 * Rows [first, first + count) of an input tensor, little-endian.
 * @param {any} file @param {import('../gguf-format.js').TensorInfo & { littleEndian?: boolean }} t
 * @param {number} first @param {number} count
 * @returns {Promise<Uint8Array>}
 */
async function readRows(file, t, first, count) {
  let bytes;
  if (typeof file.readRows === 'function') bytes = await file.readRows(t, first, count);
  else {
    const all = /** @type {Uint8Array} */ (file.tensorBytes(t.name));
    const rowBytes = count > 0 ? all.length / t.dims.slice(1).reduce((a, b) => a * b, 1) : 0;
    bytes = all.subarray(first * rowBytes, (first + count) * rowBytes);
  }
  return (t.littleEndian ?? file.littleEndian ?? true) ? bytes : toLittleEndian(t.type, bytes);
}

/**
 * One step's output bytes: the chunk as it is, or decoded to f32 and quantized.
 * @param {PipelineCodec} codec @param {Step} s @param {Uint8Array} raw
 * @param {{ f32: Float32Array }} scratch
 * @returns {Promise<Uint8Array>}
 */
async function convert(codec, s, raw, scratch) {
  const { t } = s;
  if (t.to === t.from) return raw;
  if (s.count === 0) return new Uint8Array(0);
  let x;
  if (t.from === T.F32) {
    const b = raw.byteOffset % 4 === 0 ? raw : raw.slice();
    x = new Float32Array(b.buffer, b.byteOffset, b.length / 4);
  } else {
    // Decoded into one reused buffer (the quantize call has copied it out by the time the next
    // chunk is decoded).
    const n = (raw.length / typeInfo(t.from).typeSize) * typeInfo(t.from).blockSize;
    if (scratch.f32.length < n) scratch.f32 = new Float32Array(n);
    x = await codec.dequantize(t.from, raw, scratch.f32.subarray(0, n));
  }
  const ne0 = t.source.dims[0];
  return codec.quantize(t.to, x, s.imatrix ? { imatrix: s.imatrix, rowLength: ne0 } : { rowLength: ne0 });
}
