// llama.cpp's recipe snapshots (tests/fixtures/quant-snapshots/*.schema, see PROVENANCE.md): the
// parser, and the model each one describes rebuilt as a header planFor can take (or as a small
// GGUF file for the oracle).
import { readFileSync, readdirSync } from 'node:fs';
import { VT } from '../../js/gguf-format.js';
import { writeGGUF } from '../../js/gguf-write.js';

export const SNAPSHOT_DIR = new URL('../fixtures/quant-snapshots/', import.meta.url);

/**
 * @typedef {{ ftype: string, defaultType: string, overrides: Map<string, string> }} Section
 * @typedef {{ file: string, model: string, header: Record<string, number>, sections: Section[] }} Snapshot
 */

/** @returns {string[]} the snapshot files, sorted */
export function snapshotFiles() {
  return readdirSync(SNAPSHOT_DIR)
    .filter((f) => f.endsWith('.schema'))
    .sort();
}

/**
 * Parses a snapshot as test-quant-type-selection.cpp does: '#' lines are comments (the header's
 * `# n_embd=..., ...` gives the hparams), `[FTYPE] default` opens a section, every other line is
 * `tensor-name type` (split at the last space).
 * @param {string} file
 * @returns {Snapshot}
 */
export function readSnapshot(file) {
  const text = readFileSync(new URL(file, SNAPSHOT_DIR), 'utf8');
  /** @type {Record<string, number>} */
  const header = {};
  let model = '';
  /** @type {Section[]} */
  const sections = [];
  /** @type {Section | null} */
  let cur = null;
  for (const line of text.split('\n')) {
    if (line.startsWith('# Model: ')) model = line.slice(9);
    if (line.startsWith('# n_embd='))
      for (const kv of line.slice(2).split(', ')) {
        const [k, v] = kv.split('=');
        header[k] = Number(v);
      }
    if (line === '' || line[0] === '#') continue;
    const sec = /^\[(\w+)\] (\S+)$/.exec(line);
    if (sec) {
      cur = { ftype: sec[1], defaultType: sec[2], overrides: new Map() };
      sections.push(cur);
      continue;
    }
    if (!cur) throw new Error(`${file}: a tensor line before any section: ${line}`);
    const sp = line.lastIndexOf(' ');
    cur.overrides.set(line.slice(0, sp), line.slice(sp + 1));
  }
  return { file, model, header, sections };
}

/**
 * The quantizable tensors of a snapshot's model, with the shapes that matter to the recipe. The
 * names: every name the snapshot lists (a tensor at the default type in every section, which only
 * a 3-D expert tensor can be, is left out: no rule of another tensor counts it). ne2 > 1 for the
 * tensors the MXFP4_MOE section leaves at mxfp4 (its rule: 3-D tensors to mxfp4, all others to
 * q8_0). ne0: n_embd for output and token_embd; for the others, whether their rows are whole
 * 256-blocks is read off the IQ4_XS section (a shape fallback there: iq4_nl, q5_1, or q8_0 in a
 * model without 8 experts, which no rule of that ftype picks) and stands for 2880 (a multiple of
 * 32, not of 256) or 4096. The rows (ne1) do not matter: 2.
 * @param {Snapshot} s
 * @returns {{ name: string, dims: number[] }[]}
 */
export function snapshotTensors(s) {
  const names = new Set();
  for (const sec of s.sections) for (const n of sec.overrides.keys()) names.add(n);
  const mx = s.sections.find((x) => x.ftype === 'MXFP4_MOE');
  const iq4 = s.sections.find((x) => x.ftype === 'IQ4_XS');
  if (!mx || !iq4) throw new Error(`${s.file}: no MXFP4_MOE or IQ4_XS section`);
  return [...names].map((name) => {
    const t = iq4.overrides.get(name);
    const odd = t === 'iq4_nl' || t === 'q5_1' || (t === 'q8_0' && s.header.n_expert !== 8);
    const ne0 = name === 'output.weight' || name === 'token_embd.weight' ? s.header.n_embd : odd ? 2880 : 4096;
    return { name, dims: mx.overrides.has(name) ? [ne0, 2] : [ne0, 2, 4] };
  });
}

/**
 * The KVs of a snapshot's model as llama.cpp's loader reads them. Only the Llama model's
 * architecture matters to the recipe (80 layers with GQA: 70B); the others get a neutral name.
 * @param {Snapshot} s @param {string} [arch]
 */
export function snapshotKV(s, arch = s.file.startsWith('meta-llama') ? 'llama' : 'snapshot') {
  const h = s.header;
  const u32 = (/** @type {string} */ key, /** @type {number} */ value) => ({ key, type: VT.UINT32, value });
  return [
    { key: 'general.architecture', type: VT.STRING, value: arch },
    u32(`${arch}.context_length`, 4096),
    u32(`${arch}.embedding_length`, h.n_embd),
    u32(`${arch}.block_count`, h.n_layer),
    u32(`${arch}.feed_forward_length`, h.n_ff),
    u32(`${arch}.attention.head_count`, h.n_head),
    u32(`${arch}.attention.head_count_kv`, h.n_head_kv),
    { key: `${arch}.attention.layer_norm_rms_epsilon`, type: VT.FLOAT32, value: 1e-5 },
    ...(h.n_expert ? [u32(`${arch}.expert_count`, h.n_expert), u32(`${arch}.expert_used_count`, 2)] : []),
  ];
}

/**
 * A header as parseGGUF returns it (F32 tensors, no data), for planFor.
 * @param {Snapshot} s
 */
export function snapshotHeader(s) {
  const kv = snapshotKV(s);
  let offset = 0;
  const tensors = snapshotTensors(s).map((t) => {
    const nElements = t.dims.reduce((a, b) => a * b, 1);
    const r = { ...t, type: 0, offset, nElements, byteLength: nElements * 4 };
    offset += Math.ceil(r.byteLength / 32) * 32;
    return r;
  });
  return { kv, metadata: new Map(kv.map((e) => [e.key, e.value])), tensors };
}

/**
 * A snapshot's model as a GGUF file of F16 zeros-free values (llama-architecture KVs, for the
 * loader) for the oracle.
 * @param {Snapshot} s
 */
export function snapshotModel(s) {
  const tensors = snapshotTensors(s).map((t) => {
    const n = t.dims.reduce((a, b) => a * b, 1);
    const data = new Uint16Array(n);
    for (let i = 0; i < n; i++) data[i] = 0x2000 + ((i * 2654435761) >>> 22); // small, finite, varied
    return { name: t.name, type: 1, dims: t.dims, data };
  });
  return writeGGUF({ kv: snapshotKV(s, 'llama'), tensors });
}
