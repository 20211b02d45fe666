// Random-access byte sources for openGGUF: in-memory buffers, Blobs/Files, HTTP(S) URLs read with
// Range requests, and caller-supplied { size, read } objects.

import { GGUFError } from './gguf-format.js';

/** @typedef {import('./gguf-format.js').ParseOptions} ParseOptions */

/**
 * A random-access byte source: its size and a way to read a range.
 * @typedef {{ size: number, read(offset: number, length: number): Promise<Uint8Array>, name: string }} ByteSource
 *
 * @typedef {ParseOptions & { fetch?: typeof fetch, headers?: Record<string, string>, allowFullDownload?: boolean }} OpenOptions
 */

/**
 * @param {ArrayBuffer | Uint8Array} data
 * @returns {ByteSource}
 */
function bufferSource(data) {
  const buf = data instanceof Uint8Array ? data : new Uint8Array(data);
  return { size: buf.length, name: 'buffer', read: async (o, n) => buf.subarray(o, o + n) };
}

/** @param {Blob} blob @returns {ByteSource} */
function blobSource(blob) {
  const name = /** @type {any} */ (blob).name ?? 'blob';
  return { size: blob.size, name, read: async (o, n) => new Uint8Array(await blob.slice(o, o + n).arrayBuffer()) };
}

/**
 * An HTTP(S) URL read with Range requests. A server that answers 200 (no Range support) is an
 * error unless allowFullDownload, which then keeps the whole body in memory.
 * @param {string} url
 * @param {OpenOptions} opt
 * @returns {Promise<ByteSource>}
 */
async function urlSource(url, opt) {
  const f = opt.fetch ?? globalThis.fetch;
  const get = async (/** @type {number} */ o, /** @type {number} */ n) => {
    const res = await f(url, { headers: { ...opt.headers, Range: `bytes=${o}-${o + n - 1}` } });
    return res;
  };
  const first = await get(0, 1);
  if (first.status === 200) {
    if (!opt.allowFullDownload) {
      await first.body?.cancel();
      throw new GGUFError(
        'NO_RANGE',
        0,
        `${url}: the server ignored the Range request (HTTP 200, not 206); pass { allowFullDownload: true } to download the whole file`,
      );
    }
    return bufferSource(new Uint8Array(await first.arrayBuffer()));
  }
  if (first.status !== 206) throw new GGUFError('HTTP', 0, `${url}: HTTP ${first.status}`);
  const cr = first.headers.get('content-range') ?? '';
  const m = /\/(\d+)\s*$/.exec(cr);
  await first.arrayBuffer();
  if (!m) throw new GGUFError('HTTP', 0, `${url}: a 206 answer without a Content-Range total (${JSON.stringify(cr)})`);
  const size = Number(m[1]);
  return {
    size,
    name: url,
    read: async (o, n) => {
      if (n === 0) return new Uint8Array(0);
      const res = await get(o, n);
      if (res.status !== 206)
        throw new GGUFError('NO_RANGE', o, `${url}: expected HTTP 206 for bytes ${o}-${o + n - 1}, got ${res.status}`);
      const b = new Uint8Array(await res.arrayBuffer());
      if (b.length !== n) throw new GGUFError('TRUNCATED', o, `${url}: asked for ${n} bytes at ${o}, got ${b.length}`);
      return b;
    },
  };
}

/**
 * @param {unknown} src
 * @param {OpenOptions} opt
 * @returns {Promise<ByteSource>}
 */
export async function toSource(src, opt) {
  if (src instanceof ArrayBuffer || src instanceof Uint8Array) return bufferSource(src);
  if (typeof Blob !== 'undefined' && src instanceof Blob) return blobSource(src);
  if (src instanceof URL || (typeof src === 'string' && /^(https?|blob|data):/i.test(src)))
    return urlSource(String(src), opt);
  // A relative URL in a page or worker resolves against its location.
  const here = /** @type {any} */ (globalThis).location?.href;
  if (typeof src === 'string' && here) return urlSource(new URL(src, here).href, opt);
  if (src && typeof src === 'object' && 'read' in src && 'size' in src) return /** @type {ByteSource} */ (src);
  throw new TypeError(
    'openGGUF: source must be an ArrayBuffer, Uint8Array, Blob/File, URL or a { size, read } source (file paths: import openGGUF from js/node.js)',
  );
}
