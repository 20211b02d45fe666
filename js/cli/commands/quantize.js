// blockquant quantize IN OUT --type T: requantize the float tensors of a model, streaming, through
// the safe output of ../output.js.
import { init, typeInfo, GGMLType, GGUFValueType, GGUFError, writeGGUFHeader, toLittleEndian } from '../../node.js';
import { about, tag, Usage } from '../errors.js';
import { openInput, progress } from '../io.js';
import { writeOutput, writeAll } from '../output.js';
import { CODEC, FLOATS, MODEL_FORMATS, formatIn, names, wrapped } from '../formats.js';

/** @typedef {import('../formats.js').Format} Format */
/** @typedef {import('../io.js').Out} Out */

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

/** The block sizes of the model formats and the fallbacks, for quantize's help. */
function blockSizes() {
  const sizes = [...new Set(MODEL_FORMATS.map((t) => t.blockSize))].sort((a, b) => b - a);
  const min = sizes[sizes.length - 1];
  return `  blocks of ${sizes.map((n) => `${n}: ${names(MODEL_FORMATS.filter((t) => t.blockSize === n))}`).join('\n  blocks of ')}
  rows of a multiple of ${min} only: ${MODEL_FORMATS.filter((t) => t.blockSize > min)
    .map((t) => `${t.name} -> ${fallbackFor(t, min)?.name ?? 'kept'}`)
    .join(', ')}`;
}

/**
 * The metadata of a model quantized to `type`: general.file_type and general.quantization_version
 * as llama.cpp's quantizer writes them (UINT32), each replacing the input's entry in place or,
 * when the input has none, added after its last general.* key. For a format without a llama.cpp
 * file type, the input's general.file_type is dropped (it would name another format).
 * @param {import('../../gguf-format.js').KV[]} kv
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

/** @type {import('../io.js').Command['run']} */
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
 * @param {Awaited<ReturnType<typeof import('../../node.js').openGGUF>>} f the input
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
 * @param {import('../../gguf-format.js').TensorInfo} t @param {Format} target @param {boolean} keep1d
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

/** @type {import('../io.js').Command} */
export const command = {
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
};
