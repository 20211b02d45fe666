// Shared by the JS tests: which build to test, fixtures, seeded inputs, bit comparisons.
import { readFileSync } from 'node:fs';
import { init, CODEC_TYPES, typeInfo } from '../../js/index.js';

/** The build under test: BQ_BACKEND=simd128|scalar (make test runs the suite once for each). */
export const BACKEND = /** @type {'simd128' | 'scalar'} */ (process.env.BQ_BACKEND ?? 'simd128');

/** A codec on the packaged build under test (wasm/blockquant-<BACKEND>.wasm: public kernels only). */
export function codec(options = {}) {
  return init({ backend: BACKEND, ...options });
}

/**
 * The test variant of a build (`make test-wasm`): the same kernel objects as the packaged module,
 * linked with every __ref / __simd128 / __relaxed kernel exported, for tests that call them.
 * @param {'simd128' | 'scalar' | 'relaxed' | 'threads'} build
 */
export const testWasmFile = (build) => new URL(`../../build/test/blockquant-${build}.wasm`, import.meta.url);

/** A codec on the test variant of the build under test (its exports hold every kernel). */
export function testCodec(options = {}) {
  const backend = options.backend ?? BACKEND;
  return init({ ...options, backend, module: readFileSync(testWasmFile(backend)) });
}

// The type lists, from the type table (js/types.js, checked against the wasm one): the types the
// API tests can make from f32 values (the IQ grid types, which only decode, are in iquants.test.js).
const TYPES = CODEC_TYPES.map((id) => typeInfo(id)).filter((t) => t.quantize);
export const QTYPES = TYPES.filter((t) => t.blockSize > 1).map((t) => t.name);
export const ALL_TYPES = [...TYPES.filter((t) => t.blockSize === 1).map((t) => t.name), ...QTYPES];
/** ggml's vec_dot pairs of the block types. */
export const PAIRS = TYPES.filter((t) => t.dot && t.blockSize > 1).map((t) => [t.name, typeInfo(t.vecDot).name]);
export const BLOCK_COUNTS = [1, 2, 3, 7, 8, 9, 63, 64, 65, 1000];

const FIX = new URL('../fixtures/golden/', import.meta.url);
export const golden = {
  manifest: JSON.parse(readFileSync(new URL('manifest.json', FIX), 'utf8')),
  bytes: (rel) => new Uint8Array(readFileSync(new URL(rel, FIX))),
  floats: (rel) => {
    const b = readFileSync(new URL(rel, FIX));
    return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
  },
};

/** A seeded generator (splitmix32); tests print their seed so a failure can be replayed. */
export function rng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32;
  };
  const normal = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  return { next, normal, seed };
}

export const SEED = Number(process.env.BQ_SEED ?? Date.now() % 1e9);

/**
 * Float inputs of n blocks that cover the edge cases block by block: gaussian, zeros, constants,
 * a negative max, exact .5 ties, tiny values whose fp16 scale underflows, scales that overflow
 * fp16, subnormals, NaN, +-Inf, a largest magnitude held with both signs, and huge ranges.
 */
export function edgeInputs(nBlocks, seed) {
  const r = rng(seed);
  const x = new Float32Array(nBlocks * 32);
  for (let b = 0; b < nBlocks; b++) {
    const o = b * 32;
    const kind = b % 15;
    for (let j = 0; j < 32; j++) {
      const g = r.normal();
      let v;
      switch (kind) {
        case 0:
          v = g;
          break;
        case 1:
          v = j % 3 === 0 && j > 0 ? -0 : 0;
          break; // +0 first, then -0s
        case 2:
          v = 1.25;
          break;
        case 3:
          v = j === 5 ? -3 : r.next();
          break;
        case 4:
          v = j === 0 ? 127 : (j % 2 ? 1 : -1) * (((j * 7) % 17) + 0.5);
          break;
        case 5:
          v = g * 1e-8;
          break;
        case 6:
          v = g * 1e6;
          break;
        case 7:
          v = g * 1e-41;
          break;
        case 8:
          v = j === 9 ? NaN : g;
          break;
        case 9:
          v = j === 3 ? Infinity : j === 20 ? -Infinity : g;
          break;
        case 10:
          v = (j % 2 ? 1 : -1) * 3e38;
          break;
        case 11:
          v = j === 31 ? -1000 : g * 10;
          break;
        case 12:
          v = NaN;
          break;
        case 13:
          v = j === 2 ? 5 : j === 9 ? -5 : g;
          break; // largest |x| with both signs: the first wins
        default:
          v = (j - 16) * 2 ** -20 + g * 1e3;
          break;
      }
      x[o + j] = v;
    }
  }
  return x;
}

/** Index of the first differing bit pattern (NaN equals NaN), or -1. */
export function firstDiff(a, b) {
  if (a.length !== b.length) return -2;
  const fa = a instanceof Float32Array,
    fb = b instanceof Float32Array;
  if (fa && fb) {
    const ua = new Uint32Array(a.buffer, a.byteOffset, a.length),
      ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
    for (let i = 0; i < a.length; i++) if (ua[i] !== ub[i] && !(a[i] !== a[i] && b[i] !== b[i])) return i;
    return -1;
  }
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** Same float32 bits (or both NaN). */
export function sameFloat(a, b) {
  if (Number.isNaN(a) && Number.isNaN(b)) return true;
  return Object.is(Math.fround(a), Math.fround(b));
}

/**
 * quantize, with an importance matrix of `cols` weights (rows of `cols` values) for the types ggml
 * quantizes only with one (IQ2_XXS, IQ2_XS, IQ1_S: typeInfo(t).requiresImatrix), without one for
 * the rest; for tests whose subject is not the quantizer.
 * @param {{ quantize: Function }} c a codec @param {string | number} t @param {Float32Array} x
 * @param {number} cols
 */
export function quantizeAny(c, t, x, cols) {
  return typeInfo(t).requiresImatrix
    ? c.quantize(t, x, { imatrix: new Float32Array(cols).map((_, j) => 0.5 + ((j * 37) % 11) / 4) })
    : c.quantize(t, x);
}
