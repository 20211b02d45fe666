// Random-access byte sources for openGGUF: in-memory buffers, Blobs/Files, HTTP(S) URLs read with
// Range requests, and caller-supplied { size, read } objects. Every source, built-in or custom, is
// wrapped once by checked(): each read validates its arguments, honours the abort signal and
// returns exactly the bytes asked, or fails with a GGUFError.

import { GGUFError } from './gguf-format.js';

/** @typedef {import('./gguf-format.js').ParseOptions} ParseOptions */

/**
 * A random-access byte source: its size and a way to read a range.
 * @typedef {{ size: number, read(offset: number, length: number): Promise<Uint8Array>, name: string }} ByteSource
 *
 * @typedef {ParseOptions & { fetch?: typeof fetch, headers?: HeadersInit, allowFullDownload?: boolean,
 *   signal?: AbortSignal }} OpenOptions
 */

/**
 * A GGUFError with the error that caused it.
 * @param {string} code @param {number} offset @param {string} message @param {unknown} cause
 */
function failed(code, offset, message, cause) {
  const e = new GGUFError(code, offset, message);
  /** @type {any} */ (e).cause = cause;
  return e;
}

/**
 * The abort signal of an options object, checked.
 * @param {OpenOptions} opt
 * @returns {AbortSignal | undefined}
 */
export function signalOf(opt) {
  const s = opt.signal;
  if (s === undefined) return undefined;
  if (!s || typeof s !== 'object' || typeof s.aborted !== 'boolean' || typeof s.addEventListener !== 'function')
    throw new TypeError('openGGUF: signal must be an AbortSignal');
  return s;
}

/**
 * Settles like `p`, or rejects with the signal's reason as soon as it aborts.
 * @template T
 * @param {Promise<T>} p
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<T>}
 */
function abortable(p, signal) {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A source's declared size, checked: a finite non-negative safe integer.
 * @param {unknown} size @param {string} name
 */
function checkSize(size, name) {
  if (typeof size !== 'number') throw new TypeError(`${name}: size must be a number, got ${typeof size}`);
  if (!Number.isSafeInteger(size) || size < 0)
    throw new RangeError(`${name}: size must be a non-negative safe integer, got ${size}`);
  return size;
}

/**
 * Wraps a source so that every read is checked: integer offset and length inside the source
 * (else RangeError), the signal checked before and raced during the read (an abort rejects with
 * its reason), and a result that is an ArrayBufferView of exactly `length` bytes (else GGUFError
 * BAD_READ, SHORT_READ or LONG_READ). Errors thrown by the source become GGUFError READ with
 * the original error as `cause`, unless they already are GGUFErrors.
 * @param {{ size: number, read: Function, name?: unknown }} src
 * @param {AbortSignal | undefined} signal
 * @returns {ByteSource}
 */
function checked(src, signal) {
  const name = typeof src.name === 'string' ? src.name : 'source';
  const size = checkSize(src.size, name);
  const raw = src.read;
  if (typeof raw !== 'function') throw new TypeError(`${name}: read must be a function`);
  /** @param {number} offset @param {number} length */
  const read = async (offset, length) => {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0)
      throw new RangeError(`${name}: read(${offset}, ${length}) needs non-negative integers`);
    if (offset > size || length > size - offset)
      throw new RangeError(`${name}: read(${offset}, ${length}) lies past the end (${size} bytes)`);
    if (signal?.aborted) throw signal.reason;
    let b;
    try {
      b = await abortable(
        Promise.resolve().then(() => raw.call(src, offset, length)),
        signal,
      );
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (e instanceof GGUFError) throw e;
      throw failed(
        'READ',
        offset,
        `${name}: reading ${length} bytes at ${offset} failed: ${/** @type {any} */ (e)?.message ?? e}`,
        e,
      );
    }
    if (!ArrayBuffer.isView(b))
      throw new GGUFError('BAD_READ', offset, `${name}: read returned ${typeof b}, not a Uint8Array`);
    const u = b instanceof Uint8Array ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    if (u.length !== length)
      throw new GGUFError(
        u.length < length ? 'SHORT_READ' : 'LONG_READ',
        offset,
        `${name}: asked for ${length} bytes at ${offset}, got ${u.length}`,
      );
    return u;
  };
  return { size, name, read };
}

/**
 * @param {ArrayBuffer | SharedArrayBuffer | ArrayBufferView} data
 * @returns {{ size: number, name: string, read: (o: number, n: number) => Uint8Array }}
 */
function bufferSource(data) {
  // A view (a pooled Node.js buffer, a DataView, ...) is read at its own byteOffset.
  const buf = ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : new Uint8Array(data);
  return { size: buf.length, name: 'buffer', read: (o, n) => buf.subarray(o, o + n) };
}

/** @param {Blob} blob */
function blobSource(blob) {
  const name = /** @type {any} */ (blob).name || 'blob';
  return {
    size: blob.size,
    name,
    read: async (/** @type {number} */ o, /** @type {number} */ n) =>
      new Uint8Array(await blob.slice(o, o + n).arrayBuffer()),
  };
}

/** Cancels a response body we will not read, ignoring failures. @param {Response} res */
function discard(res) {
  try {
    res.body?.cancel().catch(() => {});
  } catch {
    // a body already locked or consumed
  }
}

/**
 * Reads a response body of exactly `n` bytes; never more than n + one chunk is held. A longer
 * body is cancelled and refused (LONG_READ), a shorter one refused (SHORT_READ).
 * @param {Response} res @param {number} n @param {number} at @param {string} url
 */
async function bodyOf(res, n, at, url) {
  const out = new Uint8Array(n);
  let got = 0;
  if (!res.body) {
    const b = new Uint8Array(await res.arrayBuffer());
    if (b.length <= n) out.set(b);
    got = b.length;
  } else {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (got + value.length > n) {
        reader.cancel().catch(() => {});
        got += value.length;
        break;
      }
      out.set(value, got);
      got += value.length;
    }
  }
  if (got !== n)
    throw new GGUFError(
      got < n ? 'SHORT_READ' : 'LONG_READ',
      at,
      `${url}: asked for ${n} bytes at ${at}, the body ${got < n ? `has ${got}` : 'is longer'}`,
    );
  return out;
}

/**
 * An HTTP(S) URL read with Range requests. Every answer must be a 206 whose Content-Range is
 * exactly the range asked, with the first answer's total, ETag and Last-Modified; later requests
 * send If-Range with the first validator, so a file that changed is refused (CHANGED) instead of
 * mixed. A server that answers 200 (no Range support) is refused (NO_RANGE) unless
 * allowFullDownload, which then keeps the whole body in memory.
 * @param {string} url
 * @param {OpenOptions} opt
 * @param {AbortSignal | undefined} signal
 */
async function urlSource(url, opt, signal) {
  const f = opt.fetch ?? globalThis.fetch;
  if (typeof f !== 'function') throw new TypeError('openGGUF: fetch must be a function');
  /** @type {{ etag: string | null, lastModified: string | null, size: number } | null} */
  let first = null;
  // If-Range is not a CORS-safelisted header: on a cross-origin URL in a page or worker it would
  // need a preflight that many file hosts refuse. There the answers' validators are compared only.
  const here = /** @type {any} */ (globalThis).location?.href;
  const ifRange = !here || new URL(url).origin === new URL(here).origin;
  /** @param {number} o @param {number} n */
  const request = async (o, n) => {
    const headers = new Headers(opt.headers);
    headers.set('Range', `bytes=${o}-${o + n - 1}`);
    // Byte ranges of the file itself, not of a compressed encoding (browsers decide this anyway).
    if (!headers.has('Accept-Encoding')) headers.set('Accept-Encoding', 'identity');
    // If-Range needs a strong validator: a strong ETag, else Last-Modified.
    const validator =
      ifRange && first && (first.etag && !first.etag.startsWith('W/') ? first.etag : first.lastModified);
    if (validator) headers.set('If-Range', validator);
    try {
      return { res: await f(url, { headers, signal }), conditional: !!validator };
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      throw failed('NETWORK', o, `${url}: ${/** @type {any} */ (e)?.message ?? e}`, e);
    }
  };
  /** Reads the body; a failure mid-body is NETWORK (or the abort reason). */
  const body = async (/** @type {Response} */ res, /** @type {number} */ n, /** @type {number} */ o) => {
    try {
      return await bodyOf(res, n, o, url);
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (e instanceof GGUFError) throw e;
      throw failed('NETWORK', o, `${url}: the body broke off: ${/** @type {any} */ (e)?.message ?? e}`, e);
    }
  };
  /**
   * Checks a 206 answer against the request and the first answer; returns its total size.
   * @param {Response} res @param {number} o @param {number} n
   */
  const check = (res, o, n) => {
    const cr = res.headers.get('content-range') ?? '';
    const m = /^\s*bytes\s+(\d+)-(\d+)\/(\d+)\s*$/i.exec(cr);
    if (!m || Number(m[1]) !== o || Number(m[2]) !== o + n - 1)
      throw new GGUFError(
        'BAD_RANGE',
        o,
        `${url}: asked for bytes ${o}-${o + n - 1}, the answer's Content-Range is ${JSON.stringify(cr)}`,
      );
    const total = Number(m[3]);
    if (!Number.isSafeInteger(total)) throw new GGUFError('BAD_RANGE', o, `${url}: size ${m[3]} is too large`);
    const len = res.headers.get('content-length');
    if (len !== null && Number(len) !== n)
      throw new GGUFError(
        Number(len) < n ? 'SHORT_READ' : 'LONG_READ',
        o,
        `${url}: asked for ${n} bytes at ${o}, Content-Length is ${len}`,
      );
    if (first) {
      const etag = res.headers.get('etag'),
        lm = res.headers.get('last-modified');
      if (
        total !== first.size ||
        (etag ?? first.etag) !== first.etag ||
        (lm ?? first.lastModified) !== first.lastModified
      )
        throw new GGUFError(
          'CHANGED',
          o,
          `${url} changed since it was opened (size ${first.size} -> ${total}, ETag ${first.etag} -> ${etag}, Last-Modified ${first.lastModified} -> ${lm})`,
        );
    }
    return total;
  };

  const probe = await request(0, 1);
  const res0 = probe.res;
  if (res0.status === 200) {
    if (!opt.allowFullDownload) {
      discard(res0);
      throw new GGUFError(
        'NO_RANGE',
        0,
        `${url}: the server ignored the Range request (HTTP 200, not 206); pass { allowFullDownload: true } to download the whole file`,
      );
    }
    const len = res0.headers.get('content-length');
    let all;
    if (len !== null && /^\d+$/.test(len.trim()) && Number.isSafeInteger(Number(len)))
      all = await body(res0, Number(len), 0);
    else {
      try {
        all = new Uint8Array(await res0.arrayBuffer());
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        throw failed('NETWORK', 0, `${url}: the body broke off: ${/** @type {any} */ (e)?.message ?? e}`, e);
      }
    }
    return { ...bufferSource(all), name: url };
  }
  if (res0.status !== 206) {
    discard(res0);
    throw new GGUFError('HTTP', 0, `${url}: HTTP ${res0.status}`);
  }
  let size;
  try {
    size = check(res0, 0, 1);
  } catch (e) {
    discard(res0);
    throw e;
  }
  await body(res0, 1, 0);
  first = { etag: res0.headers.get('etag'), lastModified: res0.headers.get('last-modified'), size };
  return {
    size,
    name: url,
    read: async (/** @type {number} */ o, /** @type {number} */ n) => {
      if (n === 0) return new Uint8Array(0);
      const { res, conditional } = await request(o, n);
      if (res.status !== 206) {
        discard(res);
        if (res.status === 200 && conditional)
          throw new GGUFError('CHANGED', o, `${url} changed since it was opened (HTTP 200 to If-Range)`);
        throw new GGUFError(
          res.status === 200 ? 'NO_RANGE' : 'HTTP',
          o,
          `${url}: expected HTTP 206 for bytes ${o}-${o + n - 1}, got ${res.status}`,
        );
      }
      try {
        check(res, o, n);
      } catch (e) {
        discard(res);
        throw e;
      }
      return body(res, n, o);
    },
  };
}

/**
 * Turns anything openGGUF accepts into a checked byte source: every read returns exactly the
 * bytes asked (a view the caller must not modify for buffer sources) or throws GGUFError
 * (SHORT_READ, LONG_READ, BAD_READ, READ, and for URLs NETWORK, HTTP, NO_RANGE, BAD_RANGE,
 * CHANGED); an abort of `options.signal` rejects with its reason, now and on every later read.
 * @param {unknown} src ArrayBuffer, any ArrayBufferView, Blob/File, URL, or { size, read, name? }
 * @param {OpenOptions} opt
 * @returns {Promise<ByteSource>}
 * @throws {TypeError | RangeError} for a source or option of the wrong type or range
 */
export async function toSource(src, opt) {
  const signal = signalOf(opt);
  if (signal?.aborted) throw signal.reason;
  /** @type {{ size: number, read: Function, name?: unknown }} */
  let raw;
  if (
    src instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer !== 'undefined' && src instanceof SharedArrayBuffer) ||
    ArrayBuffer.isView(src)
  )
    raw = bufferSource(src);
  else if (typeof Blob !== 'undefined' && src instanceof Blob) raw = blobSource(src);
  else if (src instanceof URL || (typeof src === 'string' && /^(https?|blob|data):/i.test(src)))
    raw = await urlSource(String(src), opt, signal);
  else if (typeof src === 'string' && /** @type {any} */ (globalThis).location?.href)
    // A relative URL in a page or worker resolves against its location.
    raw = await urlSource(new URL(src, /** @type {any} */ (globalThis).location.href).href, opt, signal);
  else if (src && typeof src === 'object' && 'read' in src && 'size' in src)
    raw = /** @type {{ size: number, read: Function, name?: unknown }} */ (src);
  else
    throw new TypeError(
      'openGGUF: source must be an ArrayBuffer, a typed array or DataView, a Blob/File, a URL or a { size, read } source (file paths: import openGGUF from js/node.js)',
    );
  return checked(raw, signal);
}
