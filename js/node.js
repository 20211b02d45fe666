// Node-only entry point: everything js/index.js exports, and openGGUF, readImatrix and
// quantizeModel that also take a file path or an fs/promises FileHandle (read lazily with
// positional reads), quantizeModel and planQuantize also writing to paths (js/gguf/sink-file.js).
import { open, constants } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { openGGUF as openAny, GGUFError } from './gguf.js';
import { readImatrix as readAny } from './model/imatrix.js';
import { init } from './index-node.js';
import { planWith, quantizeWith } from './model/quantize.js';
import { fileSinks, outputPaths } from './gguf/sink-file.js';

export * from './index-node.js';
export { OutputError, Interrupted, trapSignals, outputPaths, SIGNAL_STATUS } from './gguf/sink-file.js';

/** The device and inode of the files behind each file openGGUF opened (for the same-file check). */
/** @type {WeakMap<object, { dev: bigint, ino: bigint }[]>} */
const fileIdsOf = new WeakMap();

/**
 * A file as a byte source. Its size and mtime are taken once; every read checks them again
 * (fstat after the read), so a file truncated, grown or rewritten since is refused with
 * GGUFError CHANGED instead of returning short, stale or mixed bytes.
 * @param {import('node:fs/promises').FileHandle} fh
 * @param {string} name
 */
async function fileSource(fh, name, ids = /** @type {{ dev: bigint, ino: bigint }[]} */ ([])) {
  const st = await fh.stat({ bigint: true });
  if (!st.isFile())
    throw new GGUFError(
      'NOT_A_FILE',
      0,
      `${name}: not a regular file (${kindOf(st)}); only regular files can be read by offset`,
    );
  ids.push({ dev: st.dev, ino: st.ino });
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
async function nodeSources(list, opened, ids = /** @type {{ dev: bigint, ino: bigint }[]} */ ([])) {
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
      srcs.push(await fileSource(fh, s, ids));
    } else if (s && typeof s === 'object' && 'fd' in s && 'stat' in s && 'read' in s) {
      srcs.push(
        await fileSource(
          /** @type {import('node:fs/promises').FileHandle} */ (s),
          `fd ${/** @type {any} */ (s).fd}`,
          ids,
        ),
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
 * @param {import('./gguf.js').OpenGGUFOptions} [options]
 * @returns {Promise<Awaited<ReturnType<typeof openAny>> & { close: () => Promise<void> }>}
 */
export async function openGGUF(source, options = {}) {
  /** @type {import('node:fs/promises').FileHandle[]} */
  const opened = [];
  /** @type {{ dev: bigint, ino: bigint }[]} */
  const ids = [];
  try {
    const srcs = await nodeSources(Array.isArray(source) ? source : [source], opened, ids);
    const f = await openAny(Array.isArray(source) ? srcs : srcs[0], options);
    const file = {
      ...f,
      close: async () => {
        await Promise.all(opened.map((fh) => fh.close()));
      },
    };
    fileIdsOf.set(file, ids);
    return file;
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
 * @param {import('./gguf.js').OpenGGUFOptions} [options]
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

/** @type {import('./model/quantize.js').Env} */
const ENV = {
  init,
  openGGUF,
  readImatrix,
  async sinks(sink, plan, file, o) {
    // A path, or a file: URL (as a string or a URL).
    const path =
      (sink instanceof URL && sink.protocol === 'file:') || (typeof sink === 'string' && /^file:/i.test(sink))
        ? fileURLToPath(/** @type {string | URL} */ (sink))
        : sink;
    if (typeof path !== 'string') return null;
    const paths = outputPaths(path, plan.shards.length, o.keepSplit === true);
    return fileSinks(paths, { force: o.force === true, inputs: fileIdsOf.get(/** @type {object} */ (file)) ?? [] });
  },
};

/**
 * planQuantize for Node: the source may also be a path or a FileHandle (or an array of them, for
 * a split model), and the imatrix a path. As planQuantize in js/index.js otherwise.
 * @param {unknown} source
 * @param {import('./model/quantize.js').QuantizeModelOptions} options
 * @returns {Promise<import('./model/recipe.js').QuantizePlan>}
 */
export function planQuantize(source, options) {
  return planWith(ENV, source, options);
}

/**
 * quantizeModel for Node: the source may also be a path or a FileHandle (or an array of them),
 * the imatrix a path, and the sink a path: written safely (js/gguf/sink-file.js: never an input
 * file, an existing file only with `force`, a temporary file beside it moved into place when
 * complete and removed on an error or abort); with keepSplit one file per shard, named as
 * llama-quantize names them (outputPaths). As quantizeModel in js/index.js otherwise.
 * @param {unknown} source
 * @param {unknown} sink
 * @param {import('./model/quantize.js').QuantizeModelOptions} options
 * @returns {Promise<import('./model/recipe.js').QuantizePlan>}
 * @throws {import('./gguf/sink-file.js').OutputError} an output that could destroy a file
 */
export async function quantizeModel(source, sink, options) {
  // A codec of the split layout gets the modules the pipeline calls synchronously.
  await (await import('./side.js')).enableForModel(options);
  return quantizeWith(ENV, source, sink, options);
}
