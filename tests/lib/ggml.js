// llama.cpp's own ggml as a test oracle: the devDependency @node-llama-cpp/linux-x64 (its prebuilt
// libggml-base.so and libggml-cpu-x64.so, ggml 0.23), driven through build/oracle/ggml-oracle
// (tests/oracle/ggml-oracle.c, built by `make oracle`). Tests and the benchmark use it; the package
// never does. Each call runs one oracle process over a batch of commands, with files in a fresh
// temporary folder.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ORACLE = join(ROOT, 'build/oracle/ggml-oracle');

/** The folder of the pinned library build, from the installed package (its main module is
 * dist/index.js; the package exports nothing else). */
export function libDir() {
  const main = createRequire(import.meta.url).resolve('@node-llama-cpp/linux-x64');
  return join(dirname(main), '..', 'bins/linux-x64');
}

/**
 * Runs oracle commands; each job writes its inputs first and reads its outputs after.
 * @template T
 * @param {((dir: string, k: number) => { cmd: string, read: (dir: string, answer: string) => T })[]} jobs
 * @returns {T[]}
 */
export function run(jobs) {
  if (!existsSync(ORACLE)) throw new Error(`${ORACLE} is missing: run make oracle`);
  const dir = mkdtempSync(join(tmpdir(), 'bq-ggml-'));
  try {
    const made = jobs.map((j, k) => j(dir, k));
    const out = execFileSync(ORACLE, [libDir()], {
      input: made.map((m) => m.cmd).join('\n') + '\n',
      maxBuffer: 1 << 26,
    })
      .toString()
      .split('\n');
    // `info` answers several lines before its ok; every other command answers one line.
    let line = 0;
    return made.map((m, k) => {
      const lines = [];
      while (line < out.length && !/^(ok|error)\b/.test(out[line])) lines.push(out[line++]);
      const answer = out[line++] ?? '';
      if (!answer.startsWith('ok')) throw new Error(`ggml oracle, ${m.cmd}: ${answer || 'no answer'} (job ${k})`);
      return m.read(dir, [...lines, answer].join('\n'));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** @param {ArrayBufferView} a */
const bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/**
 * A quantize job: ggml_quantize_chunk(type, x, dst, 0, rows, cols, imatrix or NULL). Its result is
 * the bytes, or null where ggml aborts on the input (the grid quantizers assert that their search
 * found a grid point and that a scale is not NaN: NaN, Inf or overflowing values make them fail).
 * @param {number} type ggml type id
 * @param {Float32Array} x rows * cols values
 * @param {number} cols
 * @param {Float32Array | null} [imatrix] cols weights
 */
export const quantizeJob =
  (type, x, cols, imatrix = null) =>
  (/** @type {string} */ dir, /** @type {number} */ k) => {
    const xin = join(dir, `${k}.f32`),
      out = join(dir, `${k}.q`),
      w = join(dir, `${k}.w`);
    writeFileSync(xin, bytes(x));
    if (imatrix) writeFileSync(w, bytes(imatrix));
    return {
      cmd: `quantize ${type} ${x.length / cols} ${cols} ${xin} ${out}${imatrix ? ` ${w}` : ''}`,
      // The answer is its last line: ggml may print to stdout before it aborts (IQ2_XXS's "Oops:
      // found point ... not on grid" line comes first).
      read: (_, answer) =>
        answer.split('\n').at(-1)?.startsWith('ok abort') ? null : new Uint8Array(readFileSync(out)),
    };
  };

/**
 * ggml_quantize_chunk for each case, in one oracle run: its bytes, or null where ggml aborts.
 * @param {{ type: number, x: Float32Array, cols: number, imatrix?: Float32Array | null }[]} cases
 * @returns {(Uint8Array | null)[]}
 */
export function quantize(cases) {
  return run(cases.map((c) => quantizeJob(c.type, c.x, c.cols, c.imatrix)));
}

/**
 * ggml's quantize_row_<type>_ref of each case's n values (for Q8_1 and Q8_K, which
 * ggml_quantize_chunk has no case for), in one oracle run. Bytes ggml leaves unwritten are 0.
 * @param {{ type: number, x: Float32Array }[]} cases
 * @returns {Uint8Array[]}
 */
export function quantizeRef(cases) {
  return run(
    cases.map((c) => (dir, k) => {
      const xin = join(dir, `${k}.f32`),
        out = join(dir, `${k}.q`);
      writeFileSync(xin, bytes(c.x));
      return {
        cmd: `quantize-ref ${c.type} ${c.x.length} ${xin} ${out}`,
        read: () => new Uint8Array(readFileSync(out)),
      };
    }),
  );
}

/**
 * dequantize_row_<type> (the type traits' to_float) of each case.
 * @param {{ type: number, q: Uint8Array, n: number }[]} cases
 * @returns {Float32Array[]}
 */
export function dequantize(cases) {
  return run(
    cases.map((c) => (dir, k) => {
      const qin = join(dir, `${k}.q`),
        out = join(dir, `${k}.f32`);
      writeFileSync(qin, c.q);
      return {
        cmd: `dequantize ${c.type} ${c.n} ${qin} ${out}`,
        read: () => {
          const b = readFileSync(out);
          return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
        },
      };
    }),
  );
}

/**
 * The CPU backend's vec_dot (ggml's generic C) of n values of type with its vec_dot type: the
 * result's float bits.
 * @param {{ type: number, x: Uint8Array, y: Uint8Array, n: number }[]} cases
 * @returns {number[]} uint32 bits of each result
 */
export function dot(cases) {
  return run(
    cases.map((c) => (dir, k) => {
      const xf = join(dir, `${k}.x`),
        yf = join(dir, `${k}.y`);
      writeFileSync(xf, c.x);
      writeFileSync(yf, c.y);
      return { cmd: `dot ${c.type} ${c.n} ${xf} ${yf}`, read: (_, a) => parseInt(a.split(' ')[1], 16) >>> 0 };
    }),
  );
}

/**
 * The grid search tables ggml builds for a type (iq2xs_init_impl / iq3xs_init_impl): the grid
 * (uint64 or uint32 entries), the map (int32) and the neighbour lists (uint16), as bytes.
 * @param {number} type
 * @returns {{ grid: Uint8Array, map: Uint8Array, neighbours: Uint8Array }}
 */
export function tables(type) {
  return run([
    (dir) => ({
      cmd: `tables ${type} ${join(dir, 't')}`,
      read: () => ({
        grid: new Uint8Array(readFileSync(join(dir, 't.grid'))),
        map: new Uint8Array(readFileSync(join(dir, 't.map'))),
        neighbours: new Uint8Array(readFileSync(join(dir, 't.neighbours'))),
      }),
    }),
  ])[0];
}

/**
 * ggml's type traits: per id, [name, blockSize, typeSize, requiresImatrix] (blockSize 0: a
 * retired id).
 * @returns {Map<number, [string, number, number, boolean]>}
 */
export function traits() {
  const [text] = run([() => ({ cmd: 'info', read: (_, a) => a })]);
  /** @type {Map<number, [string, number, number, boolean]>} */
  const m = new Map();
  for (const l of text.split('\n')) {
    const f = /^type (\d+) (\S+) (\d+) (\d+) ([01])$/.exec(l);
    if (f) m.set(+f[1], [f[2], +f[3], +f[4], f[5] === '1']);
  }
  return m;
}

/**
 * Seconds per ggml_quantize_chunk call, repeated for at least ms milliseconds (after the tables
 * are built), and the seconds ggml_quantize_init took for the type in a fresh process.
 * @param {number} type
 * @param {Float32Array} x
 * @param {number} cols
 * @param {Float32Array | null} imatrix
 * @param {number} ms
 * @returns {{ seconds: number, calls: number }}
 */
export function time(type, x, cols, imatrix, ms) {
  return run([
    (dir) => {
      const xin = join(dir, 'x.f32'),
        w = join(dir, 'w.f32');
      writeFileSync(xin, bytes(x));
      if (imatrix) writeFileSync(w, bytes(imatrix));
      return {
        cmd: `time ${type} ${x.length / cols} ${cols} ${xin}${imatrix ? ` ${w}` : ''} ${ms}`,
        read: (_, a) => {
          const [, s, c] = a.split(' ');
          return { seconds: +s, calls: +c };
        },
      };
    },
  ])[0];
}

/** @param {number} type @returns {number} seconds ggml_quantize_init(type) takes, first time */
export function timeInit(type) {
  return run([() => ({ cmd: `time-init ${type}`, read: (_, a) => +a.split(' ')[1] })])[0];
}
