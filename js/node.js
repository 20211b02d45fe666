// Node-only entry point: everything js/index.js exports, and openGGUF and readImatrix that also
// take a file path or an fs/promises FileHandle (read lazily with positional reads).
import { open, constants } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { openGGUF as openAny, GGUFError } from './gguf.js';
import { readImatrix as readAny } from './model/imatrix.js';

export * from './index-node.js';

/**
 * A file as a byte source. Its size and mtime are taken once; every read checks them again
 * (fstat after the read), so a file truncated, grown or rewritten since is refused with
 * GGUFError CHANGED instead of returning short, stale or mixed bytes.
 * @param {import('node:fs/promises').FileHandle} fh
 * @param {string} name
 */
async function fileSource(fh, name) {
  const st = await fh.stat({ bigint: true });
  if (!st.isFile())
    throw new GGUFError(
      'NOT_A_FILE',
      0,
      `${name}: not a regular file (${kindOf(st)}); only regular files can be read by offset`,
    );
  if (st.size > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${name}: ${st.size} bytes is too large`);
  const size = Number(st.size);
  /** @param {number} offset */
  const changed = (offset, /** @type {string} */ why) =>
    new GGUFError('CHANGED', offset, `${name} changed since it was opened (${why})`);
  return {
    size,
    name,
    /** @param {number} offset @param {number} length */
    async read(offset, length) {
      const buf = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await fh.read(buf, done, length - done, offset + done);
        if (bytesRead === 0) throw changed(offset + done, `it ends at byte ${offset + done}, not ${size}`);
        done += bytesRead;
      }
      const now = await fh.stat({ bigint: true });
      if (now.size !== st.size) throw changed(offset, `size ${st.size} -> ${now.size}`);
      if (now.mtimeNs !== st.mtimeNs || now.ino !== st.ino) throw changed(offset, 'it was modified');
      return buf;
    },
  };
}

/** What kind of file a stat describes, for messages. @param {import('node:fs').BigIntStats} st */
function kindOf(st) {
  return st.isFIFO()
    ? 'a FIFO'
    : st.isDirectory()
      ? 'a directory'
      : st.isCharacterDevice() || st.isBlockDevice()
        ? 'a device'
        : st.isSocket()
          ? 'a socket'
          : 'not a regular file';
}

/**
 * Opens a path for reading; a path that cannot be opened (missing, unreadable) is a GGUFError
 * OPEN naming it, with Node's error as the cause. O_NONBLOCK: opening a FIFO must not wait for a
 * writer (it would block a libuv thread, and the process, for good); fileSource then refuses
 * anything but a regular file (NOT_A_FILE). On regular files O_NONBLOCK changes nothing.
 * @param {string} path
 */
async function openFile(path) {
  try {
    return await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    if (/** @type {any} */ (e)?.code === 'EISDIR')
      throw new GGUFError('NOT_A_FILE', 0, `${path}: not a regular file (a directory)`);
    const err = new GGUFError('OPEN', 0, `${path}: cannot open (${/** @type {Error} */ (e).message})`);
    err.cause = e;
    throw err;
  }
}

/**
 * Node's sources: file paths (not URLs) and FileHandles become file sources; anything else is
 * passed on. Files opened from paths are listed in `opened` (the caller closes them).
 * @param {unknown[]} list
 * @param {import('node:fs/promises').FileHandle[]} opened
 */
async function nodeSources(list, opened) {
  const srcs = [];
  for (const item of list) {
    // file: URLs (strings or URL objects) are paths.
    const s =
      (item instanceof URL && item.protocol === 'file:') || (typeof item === 'string' && /^file:/i.test(item))
        ? fileURLToPath(/** @type {string | URL} */ (item))
        : item;
    if (typeof s === 'string' && !/^(https?|blob|data):/i.test(s)) {
      const fh = await openFile(s);
      opened.push(fh);
      srcs.push(await fileSource(fh, s));
    } else if (s && typeof s === 'object' && 'fd' in s && 'stat' in s && 'read' in s) {
      srcs.push(
        await fileSource(/** @type {import('node:fs/promises').FileHandle} */ (s), `fd ${/** @type {any} */ (s).fd}`),
      );
    } else {
      srcs.push(s);
    }
  }
  return srcs;
}

/**
 * openGGUF for Node: sources may also be file paths or FileHandles (or arrays of them, for split
 * models), read with positional reads; a file that changes after open is refused (GGUFError
 * CHANGED). Files opened from paths stay open until close() is called; FileHandles passed in stay
 * the caller's. Options and errors as for openGGUF in js/index.js.
 * @param {unknown} source
 * @param {import('./gguf.js').OpenOptions} [options]
 * @returns {Promise<Awaited<ReturnType<typeof openAny>> & { close: () => Promise<void> }>}
 */
export async function openGGUF(source, options = {}) {
  /** @type {import('node:fs/promises').FileHandle[]} */
  const opened = [];
  try {
    const srcs = await nodeSources(Array.isArray(source) ? source : [source], opened);
    const f = await openAny(Array.isArray(source) ? srcs : srcs[0], options);
    return {
      ...f,
      close: async () => {
        await Promise.all(opened.map((fh) => fh.close()));
      },
    };
  } catch (e) {
    await Promise.all(opened.map((fh) => fh.close()));
    throw e;
  }
}

/**
 * readImatrix for Node: the source may also be a file path or a FileHandle (read with positional
 * reads; a file opened from a path is closed before this returns). Options, result and errors as
 * for readImatrix in js/index.js.
 * @param {unknown} source
 * @param {import('./gguf.js').OpenOptions} [options]
 * @returns {ReturnType<typeof readAny>}
 */
export async function readImatrix(source, options = {}) {
  /** @type {import('node:fs/promises').FileHandle[]} */
  const opened = [];
  try {
    const [src] = await nodeSources([source], opened);
    return await readAny(src, options);
  } finally {
    await Promise.all(opened.map((fh) => fh.close()));
  }
}
