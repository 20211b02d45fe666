// A large F16 model that is never held in memory: a { size, read } source that serves a GGUF
// header and generated tensor data (gaussian F16 values from a small pool, read at an offset
// that depends on the position), so tests can quantize a model far larger than the memory bound.
// For tests/model-memory.test.js's child process and its cross-check.
import { writeGGUFHeader } from '../../js/gguf-write.js';
import { modelKV } from './models.js';
import { toHalf } from './oracle-k.js';
import { rng } from './helpers.js';

const POOL = 1 << 16;

/**
 * @param {{ embd: number, vocab: number, layers?: number, ff?: number }} spec two big matrices
 *   (token_embd, output: embd x vocab F16) and `layers` small llama blocks
 * @returns {{ size: number, read(offset: number, length: number): Promise<Uint8Array>, name: string }}
 */
export function bigModelSource({ embd, vocab, layers = 1, ff = 256 }) {
  const r = rng(5);
  const pool = new Uint16Array(POOL);
  for (let i = 0; i < POOL; i++) pool[i] = toHalf(r.normal() * 0.05);
  const poolBytes = new Uint8Array(pool.buffer);
  const kvDim = embd / 4;
  const list = [
    { name: 'token_embd.weight', dims: [embd, vocab], type: 1 },
    { name: 'output_norm.weight', dims: [embd], type: 0 },
    { name: 'output.weight', dims: [embd, vocab], type: 1 },
  ];
  for (let i = 0; i < layers; i++)
    list.push(
      { name: `blk.${i}.attn_norm.weight`, dims: [embd], type: 0 },
      { name: `blk.${i}.attn_q.weight`, dims: [embd, embd], type: 1 },
      { name: `blk.${i}.attn_k.weight`, dims: [embd, kvDim], type: 1 },
      { name: `blk.${i}.attn_v.weight`, dims: [embd, kvDim], type: 1 },
      { name: `blk.${i}.attn_output.weight`, dims: [embd, embd], type: 1 },
      { name: `blk.${i}.ffn_norm.weight`, dims: [embd], type: 0 },
      { name: `blk.${i}.ffn_gate.weight`, dims: [embd, ff], type: 1 },
      { name: `blk.${i}.ffn_down.weight`, dims: [ff, embd], type: 1 },
      { name: `blk.${i}.ffn_up.weight`, dims: [embd, ff], type: 1 },
    );
  const kv = modelKV({ layers, embd, ff, heads: 8, headsKv: 2 });
  const sizes = list.map((t) => t.dims.reduce((a, b) => a * b, 1) * (t.type ? 2 : 4));
  const { header, offsets, dataBytes } = writeGGUFHeader({
    kv: /** @type {any} */ (kv),
    tensors: list.map((t, i) => ({ ...t, byteLength: sizes[i] })),
  });
  const starts = offsets.map((o) => header.length + o);
  // F32 norms are all 1.0: bytes 00 00 80 3f.
  const one = new Uint8Array(new Float32Array([1]).buffer);
  return {
    name: 'big model',
    size: header.length + dataBytes,
    async read(offset, length) {
      const out = new Uint8Array(length);
      for (let i = 0; i < length;) {
        const at = offset + i;
        if (at < header.length) {
          const k = Math.min(length - i, header.length - at);
          out.set(header.subarray(at, at + k), i);
          i += k;
          continue;
        }
        let t = starts.length - 1;
        while (t > 0 && starts[t] > at) t--;
        const rel = at - starts[t];
        const end = starts[t] + sizes[t];
        if (rel >= sizes[t]) {
          // padding: zeros up to the next tensor
          const next = t + 1 < starts.length ? starts[t + 1] : offset + length;
          i += Math.min(length - i, next - at);
          continue;
        }
        const k = Math.min(length - i, end - at);
        if (list[t].type === 0) for (let j = 0; j < k; j++) out[i + j] = one[(rel + j) & 3];
        else
          for (let j = 0; j < k;) {
            // The pool, read from a position that moves with the row (rel / 2 values in).
            const p = (rel + j + ((((rel + j) >>> 13) * 2654435761) >>> 16) * 2) % poolBytes.length;
            const n = Math.min(k - j, poolBytes.length - p, 8192 - ((rel + j) % 8192));
            out.set(poolBytes.subarray(p, p + n), i + j);
            j += n;
          }
        i += k;
      }
      return out;
    },
  };
}
