// The CLI's streams and input: stdout/stderr errors caught (EPIPE, ENOSPC) instead of crashing,
// the progress bar, and opening a GGUF input that must be a regular file.
import { stat } from 'node:fs/promises';
import { openGGUF } from '../node.js';
import { about, ReaderGone, tag } from './errors.js';

/** @typedef {{ write(s: string): unknown, isTTY?: boolean, columns?: number }} Out */
/** @typedef {Record<string, string | boolean | string[] | undefined>} Values */
/**
 * A command: its usage line and summary, its positionals (the last `optional` of them may be left
 * out), parseArgs options (`multiple`: repeatable, the values in order), the help's option lines,
 * and what it runs (returning the exit status).
 * @typedef {{
 *   usage: string, about: string, positionals: string[], optional?: number,
 *   options: Record<string, { type: 'string' | 'boolean', multiple?: boolean }>, details: string,
 *   run: (pos: string[], opt: Values, print: (s: string) => void, err: Out) => Promise<number>,
 * }} Command
 */

// The first error each output stream reported ('error' events arrive after the write that failed).
/** @type {WeakMap<object, Error | null>} */
const streamErrors = new WeakMap();

/** Listens for errors on a Node stream (EPIPE, ENOSPC, ...) so they never crash the process. */
/** @param {Out} stream */
export function watch(stream) {
  const s = /** @type {any} */ (stream);
  if (typeof s.on !== 'function' || streamErrors.has(s)) return;
  streamErrors.set(s, null);
  s.on('error', (/** @type {Error} */ e) => {
    if (!streamErrors.get(s)) streamErrors.set(s, e);
  });
}

/** Throws what went wrong on stdout: ReaderGone for EPIPE, the error (naming stdout) otherwise. */
/** @param {Out} stream */
export function checkStream(stream) {
  const s = /** @type {any} */ (stream);
  const e = streamErrors.get(s) ?? s.errored;
  if (!e) return;
  if (e.code === 'EPIPE') throw new ReaderGone();
  throw tag(e, 'stdout');
}

/** Waits until what was written to a Node stream has been handed to the OS (or failed). */
/** @param {Out} stream */
export async function drain(stream) {
  const s = /** @type {any} */ (stream);
  if (typeof s.writableLength !== 'number' || s.destroyed) return;
  await new Promise((resolve) => s.write('', () => resolve(undefined)));
}

/**
 * Runs the CLI with `args` (without node and the script), writing to io.out and io.err (Node
 * streams or any `{ write(s) }`). Returns the exit status: 0 ok, also when the reader of io.out

/** A progress bar on a terminal (nothing when stderr is not a TTY). */
/** @param {Out} err @param {number} done @param {number} total */
export function progress(err, done, total) {
  if (!err.isTTY || total === 0) return;
  err.write(
    `\r[${'#'.repeat(Math.round((30 * done) / total)).padEnd(30)}] ${((100 * done) / total).toFixed(0)}%${done === total ? '\n' : ''}`,
  );
}

/**
 * Opens the GGUF file at `path` for reading, refusing what is not a regular file (a directory, a
 * FIFO, a device: GGUF needs random access to a fixed size). With `split`, the first shard of a
 * split model named as gguf-split names them (NAME-00001-of-0000N.gguf) opens all N shards, as
 * llama.cpp's loader finds them. Returns the open file and the size of its files in bytes. Errors
 * name the file.
 * @param {string} path
 * @param {{ split?: boolean }} [options]
 */
export async function openInput(path, options = {}) {
  const m = options.split ? /^(.*)-00001-of-(\d{5})\.gguf$/.exec(path) : null;
  const n = m ? Number(m[2]) : 1;
  const paths =
    n > 1 && m
      ? Array.from({ length: n }, (_, i) => `${m[1]}-${String(i + 1).padStart(5, '0')}-of-${m[2]}.gguf`)
      : [path];
  let bytes = 0;
  for (const p of paths)
    await about(p, async () => {
      const st = await stat(p);
      if (!st.isFile()) throw new Error(st.isDirectory() ? 'is a directory' : 'is not a regular file');
      bytes += st.size;
    });
  return { f: await about(path, () => openGGUF(paths.length > 1 ? paths : path)), bytes };
}
