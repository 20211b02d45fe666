// Path sinks (Node only; the browser entry points never import this): a file written so that a
// user's file is never destroyed. The output is refused when it is an input file (by any name,
// hard link or symlink), not a regular file, or exists without `force`. The bytes go to a
// temporary file beside it (created exclusively), which is fsynced, then moved into place (with
// force by rename, an atomic replace; without it by link, which fails if the name appeared
// meanwhile), and the directory fsynced where the platform allows. On an error or an abort the
// temporary file is removed and the path left as it was. With keepSplit, llama-quantize's shard
// names. trapSignals() turns SIGINT/SIGTERM/SIGHUP into an AbortSignal for a command line.

import { open as openFile, stat, lstat, rename, link, unlink } from 'node:fs/promises';
import { unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** @typedef {import('./sinks.js').Sink} Sink */
/** @typedef {{ dev: number | bigint, ino: number | bigint }} FileId */

/** An output refused because writing it could destroy a file. */
export class OutputError extends Error {
  /**
   * @param {'SAME_FILE' | 'NOT_A_FILE' | 'EXISTS'} code
   * @param {string} file the output path
   * @param {string} message
   */
  constructor(code, file, message) {
    super(`${file}: ${message}`);
    this.name = 'OutputError';
    this.code = code;
    this.file = file;
  }
}

/** Exit status after a signal, as a shell reports it: 128 + the signal's number. */
export const SIGNAL_STATUS = Object.freeze({ SIGHUP: 129, SIGINT: 130, SIGTERM: 143 });

/** A signal stopped the work: the reason trapSignals' AbortSignal aborts with. */
export class Interrupted extends Error {
  /** @param {keyof typeof SIGNAL_STATUS} signal */
  constructor(signal) {
    super(`interrupted by ${signal}`);
    this.name = 'Interrupted';
    this.signal = signal;
    this.status = SIGNAL_STATUS[signal];
  }
}

// Temporary files being written, removed synchronously if a second signal ends the process at once.
/** @type {Set<string>} */
const pending = new Set();
// Outputs placed as new files (not replacing one) while signals are trapped: a signal that comes
// while the last step runs must still leave nothing under OUT, so until release() a second signal
// removes them too, and discardPlaced() removes them after a first.
/** @type {Set<string>} */
const placed = new Set();
let trapping = 0;

/** Error codes of link() on file systems without hard links (then: check, and rename). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV']);
/** Error codes of fsync on a directory where the platform does not allow it (Windows, some FS). */
const NO_DIR_SYNC = new Set(['EISDIR', 'EINVAL', 'EPERM', 'EBADF', 'EACCES', 'ENOTSUP', 'EOPNOTSUPP']);

/**
 * The output paths of a job: the path itself, or with keepSplit llama-quantize's shard names (its
 * tool drops the last 5 characters when the path holds ".gguf", then llama_split_path appends
 * "-%05d-of-%05d.gguf"; so out.gguf gives out-00001-of-00002.gguf, also for one shard).
 * @param {string} path @param {number} count @param {boolean} keepSplit
 * @returns {string[]}
 */
export function outputPaths(path, count, keepSplit) {
  if (!keepSplit) return [path];
  const prefix = path.includes('.gguf') ? path.slice(0, -5) : path;
  const n = String(count).padStart(5, '0');
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(5, '0')}-of-${n}.gguf`);
}

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
 * The device and inode of each input, from paths or FileHandles.
 * @param {unknown[]} inputs
 * @returns {Promise<FileId[]>}
 */
export async function fileIds(inputs) {
  /** @type {FileId[]} */
  const ids = [];
  for (const x of inputs) {
    const h = /** @type {any} */ (x);
    if (typeof x === 'string') {
      const st = await statOrNull(x, stat);
      if (st) ids.push({ dev: st.dev, ino: st.ino });
    } else if (h && typeof h === 'object' && typeof h.fd === 'number' && typeof h.stat === 'function') {
      const st = await h.stat();
      ids.push({ dev: st.dev, ino: st.ino });
    } else if (h && typeof h === 'object' && 'dev' in h && 'ino' in h) ids.push({ dev: h.dev, ino: h.ino });
  }
  return ids;
}

/**
 * Opens one sink per path, after checking every path: none may be an input, a non-regular file,
 * or (without force) exist. Each writes a temporary file beside its path; commit() moves it into
 * place, abort() removes it.
 * @param {string[]} paths
 * @param {{ force?: boolean, inputs?: FileId[] }} [options] inputs: the files being read
 * @returns {Promise<Sink[]>}
 * @throws {OutputError} SAME_FILE, NOT_A_FILE, EXISTS; Node's errors (with `file` set to the path)
 */
export async function fileSinks(paths, options = {}) {
  const force = options.force === true;
  const inputs = options.inputs ?? [];
  if (new Set(paths).size !== paths.length) throw new OutputError('SAME_FILE', paths[0], 'is named twice');
  for (const path of paths) {
    // What `path` leads to (through symlinks), and whether a name is there at all (a dangling symlink).
    const target = await about(path, () => statOrNull(path, stat));
    const entry = await about(path, () => statOrNull(path, lstat));
    if (target && inputs.some((i) => BigInt(i.dev) === BigInt(target.dev) && BigInt(i.ino) === BigInt(target.ino)))
      throw new OutputError('SAME_FILE', path, 'is the input file; write the output to another file');
    if (target && !target.isFile()) throw new OutputError('NOT_A_FILE', path, 'exists and is not a regular file');
    if (entry && !force) throw new OutputError('EXISTS', path, 'exists (force replaces it)');
  }
  /** @type {Sink[]} */
  const sinks = [];
  try {
    for (const path of paths) sinks.push(await fileSink(path, force));
  } catch (e) {
    for (const s of sinks) await s.abort(e);
    throw e;
  }
  return sinks;
}

/**
 * @template T
 * @param {string} file @param {() => Promise<T>} step
 * @returns {Promise<T>}
 */
async function about(file, step) {
  try {
    return await step();
  } catch (e) {
    throw tagged(e, file);
  }
}

/** Names the file an error is about, unless an inner step already did. @param {unknown} e @param {string} file */
function tagged(e, file) {
  if (e && typeof e === 'object' && !('file' in e)) /** @type {any} */ (e).file = file;
  return e;
}

/**
 * One path's sink over a new temporary file beside it.
 * @param {string} path @param {boolean} force
 * @returns {Promise<Sink>}
 */
async function fileSink(path, force) {
  /** @type {import('node:fs/promises').FileHandle | null} */
  let fh = null;
  /** @type {string | null} */
  let tmp = null;
  for (let attempt = 0; !fh; attempt++) {
    const name = join(dirname(path), `.${basename(path).slice(0, 64)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      fh = await openFile(name, 'wx', 0o666);
    } catch (e) {
      if (/** @type {any} */ (e).code !== 'EEXIST' || attempt >= 10) throw tagged(e, path);
      continue;
    }
    tmp = name;
    pending.add(tmp);
  }
  let position = 0;
  /** The file this sink put at `path` (without force: a new name, so one that may be taken back). */
  /** @type {{ dev: number, ino: number } | null} */
  let ours = null;
  const remove = async () => {
    if (fh) await fh.close().catch(() => {});
    fh = null;
    if (tmp) {
      await unlink(tmp).catch(() => {});
      pending.delete(tmp);
      tmp = null;
    }
    // A later shard of the job failed: a shard this sink created is removed again, if it is still
    // the file it placed (one that replaced a file with force stays: the old one is gone).
    if (ours) {
      const st = await statOrNull(path, lstat).catch(() => null);
      if (st && st.dev === ours.dev && st.ino === ours.ino) await unlink(path).catch(() => {});
      ours = null;
    }
  };
  return {
    name: path,
    write: (chunk) =>
      about(path, async () => {
        if (!fh) throw new Error('the output was closed');
        for (let done = 0; done < chunk.length;) {
          const { bytesWritten } = await fh.write(chunk, done, chunk.length - done, position);
          if (bytesWritten <= 0) throw new Error('the file system took no bytes');
          done += bytesWritten;
          position += bytesWritten;
        }
      }),
    close: () =>
      about(path, async () => {
        if (!fh) return;
        await fh.sync();
        const h = fh;
        fh = null;
        await h.close();
      }),
    commit: () =>
      about(path, async () => {
        if (!tmp) throw new Error('the output was removed');
        const st = await stat(tmp);
        await place(tmp, path, force);
        pending.delete(tmp);
        tmp = null;
        if (!force) ours = { dev: st.dev, ino: st.ino };
        await syncDir(dirname(path));
      }),
    abort: remove,
  };
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
    if (code === 'EEXIST') throw new OutputError('EXISTS', path, 'exists (force replaces it)');
    if (!NO_HARD_LINKS.has(code)) throw e;
    // No hard links here: check, then rename (a window between the two instead of none).
    if (await statOrNull(path, lstat)) throw new OutputError('EXISTS', path, 'exists (force replaces it)');
    if (trapping) placed.add(path);
    return rename(tmp, path);
  }
  if (trapping) placed.add(path);
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

/**
 * Catches SIGINT, SIGTERM and SIGHUP until release(): the first aborts `signal` with an
 * Interrupted (pass it to quantizeModel: the temporary files are removed on the way out); a second
 * removes every temporary file of this module synchronously and exits at once with the signal's
 * status.
 * Outputs placed as new files while the trap is set are removed by a second signal too, and by
 * discardPlaced() (for a first signal that came during the last step).
 * @returns {{ signal: AbortSignal, readonly got: Interrupted | null, discardPlaced(): Promise<void>, release(): void }}
 */
export function trapSignals() {
  const ac = new AbortController();
  /** @type {Interrupted | null} */
  let got = null;
  const on = (/** @type {keyof typeof SIGNAL_STATUS} */ signal) => {
    if (got) {
      for (const p of [...pending, ...placed]) {
        try {
          unlinkSync(p);
        } catch {
          // already gone
        }
      }
      process.exit(SIGNAL_STATUS[signal]);
    }
    got = new Interrupted(signal);
    ac.abort(got);
  };
  const signals = /** @type {(keyof typeof SIGNAL_STATUS)[]} */ (Object.keys(SIGNAL_STATUS));
  for (const s of signals) process.on(s, on);
  trapping++;
  let released = false;
  return {
    signal: ac.signal,
    get got() {
      return got;
    },
    /** Removes the outputs placed as new files since the trap was set (after a signal). */
    async discardPlaced() {
      for (const p of placed) await unlink(p).catch(() => {});
      placed.clear();
    },
    release() {
      if (released) return;
      released = true;
      for (const s of signals) process.off(s, on);
      if (--trapping === 0) placed.clear();
    },
  };
}
