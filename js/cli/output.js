// Writing an output file safely (Node only): into an exclusive temporary file beside it, flushed,
// then renamed (or linked) into place, so a user's file is never truncated, never the input, and
// never replaced without --force; SIGINT, SIGTERM and SIGHUP remove the temporary file.
import { open as openFile, stat, lstat, rename, link, unlink } from 'node:fs/promises';
import { unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { about, tag, Refused, Interrupted, SIGNAL_STATUS } from './errors.js';

/**
 * Writes all of `bytes` at `position` (a write may take fewer bytes than asked).
 * @param {import('node:fs/promises').FileHandle} fh @param {Uint8Array} bytes @param {number} position
 */
export async function writeAll(fh, bytes, position) {
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
export async function writeOutput(path, { force, input }, fill) {
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
