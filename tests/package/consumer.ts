// A strict TypeScript consumer of the installed package: real types, not any (each expected
// error at the end fails the compile if its line type-checks).
import {
  init,
  parseGGUF,
  openGGUF,
  writeGGUF,
  GGUFError,
  GGMLType,
  BlockquantError,
  type Codec,
  type InitOptions,
} from 'blockquant';
import { openGGUF as openFile } from 'blockquant/node';
import wasm from 'blockquant/wasm/blockquant-simd128.wasm';

const options: InitOptions = { backend: 'auto', module: wasm };
const bq: Codec = await init(options);
const backend: 'relaxed' | 'simd128' | 'scalar' = bq.backend;
const q: Uint8Array = bq.quantize('q4_0', new Float32Array(32));
const y: Float32Array = bq.dequantize(GGMLType.Q4_0, q);
const d: number = bq.dot('q4_0', q, 'f32', y);
const m: Float32Array = bq.matvec('q4_0', q, 1, new Float32Array(32));
const bytes: Uint8Array<ArrayBuffer> = writeGGUF({
  kv: [],
  tensors: [{ name: 'w', type: GGMLType.F32, dims: [32], data: new Uint8Array(128) }],
});
const g = parseGGUF(bytes);
const version: number = g.version;
const firstName: string = g.tensors[0].name;
const dims: number[] = g.tensors[0].dims;
const f = await openGGUF(new Blob([bytes]));
// Float and block types decode to Float32Array; I8..I64 and F64 to their own typed arrays.
const values = await bq.dequantizeTensor(f, 'w');
if (!(values instanceof Float32Array)) throw new Error('w is an F32 tensor');
const t: Float32Array = values;
// Fresh arrays are ArrayBuffer-backed (TS 5.7+ tells them from shared ones): they go into a Blob
// as they are, on the synchronous codec and the threaded one.
const fresh: Uint8Array<ArrayBuffer> = bq.quantize('q4_0', new Float32Array(32), { rowLength: 32 });
const saved = new Blob([bq.quantize('q4_0', new Float32Array(32)), fresh, bq.dequantize('q4_0', q)]);
const parts: BlobPart[] = [bq.matvec('q4_0', q, 1, y), ...bq.matvecs([bq.tensor('q4_0', q, 1, 32)], y)];
const tc = await init({ threads: 2 });
const threaded = new Blob([await tc.quantize('q4_0', new Float32Array(32)), await tc.dequantize('q4_0', q)]);
// An out array is returned as it is, shared memory included (not a BlobPart then).
const shared = new Uint8Array(new SharedArrayBuffer(18));
const same: Uint8Array<SharedArrayBuffer> = bq.quantize('q4_0', new Float32Array(32), { out: shared });
const sameOld: Uint8Array<SharedArrayBuffer> = bq.quantize('q4_0', new Float32Array(32), shared);
const decoded: Float32Array<SharedArrayBuffer> = bq.dequantize('q4_0', q, new Float32Array(new SharedArrayBuffer(128)));
const viaPath = await openFile('model.gguf');
await viaPath.close();
try {
  parseGGUF(new Uint8Array(3));
} catch (e) {
  if (e instanceof GGUFError) {
    const code: string = e.code;
    const offset: number = e.offset;
    console.log(code, offset);
  }
}
// The split layout: a core, and modules enabled by name; what is loaded is typed.
const core = await init({ layout: 'split' });
try {
  core.quantize('q4_K', new Float32Array(256));
} catch (e) {
  if (e instanceof BlockquantError && e.code === 'MODULE_NOT_LOADED') await core.enable('quant');
}
const loaded: boolean = core.modules.every((mod) => mod.loaded) || core.moduleOf('iq2_xs', 'dequantize').loaded;
// @ts-expect-error no such layout
await init({ layout: 'lazy' });
// @ts-expect-error a string is not bytes
bq.dequantize('q4_0', 'not bytes');
// @ts-expect-error no such backend
await init({ backend: 'avx2' });
// @ts-expect-error the codec has no such method
bq.compress(q);
// @ts-expect-error an array on shared memory is no BlobPart
new Blob([same]);
console.log(backend, d, m, version, firstName, dims, t, saved, parts, threaded, sameOld, decoded, loaded);
