// Node-only entry point: everything js/index.js exports, and openGGUF that also takes a file path
// or an fs/promises FileHandle (read lazily with positional reads).
import { open } from 'node:fs/promises';
import { openGGUF as openAny } from './gguf.js';

export * from './index-node.js';

/**
 * @param {import('node:fs/promises').FileHandle} fh
 * @param {string} name
 */
async function fileSource(fh, name) {
  const { size } = await fh.stat();
  return {
    size,
    name,
    /** @param {number} offset @param {number} length */
    async read(offset, length) {
      const buf = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await fh.read(buf, done, length - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === length ? buf : buf.subarray(0, done);
    },
  };
}

/**
 * openGGUF for Node: sources may also be file paths or FileHandles (or arrays of them, for split
 * models). Files opened from paths stay open until close() is called.
 * @param {unknown} source
 * @param {import('./gguf.js').OpenOptions} [options]
 * @returns {Promise<Awaited<ReturnType<typeof openAny>> & { close: () => Promise<void> }>}
 */
export async function openGGUF(source, options = {}) {
  const list = Array.isArray(source) ? source : [source];
  /** @type {import('node:fs/promises').FileHandle[]} */
  const opened = [];
  try {
    const srcs = [];
    for (const s of list) {
      if (typeof s === 'string' && !/^(https?|blob|data):/i.test(s)) {
        const fh = await open(s, 'r');
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
