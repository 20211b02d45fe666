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
 *   maxBytes?: number, signal?: AbortSignal }} OpenOptions
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

/** Whether a value is a fetch Response (of this realm or another). @param {unknown} r */
function isResponse(r) {
  if (typeof Response !== 'undefined' && r instanceof Response) return true;
  const x = /** @type {any} */ (r);
  return (
    !!x &&
    typeof x === 'object' &&
    typeof x.status === 'number' &&
    !!x.headers &&
    typeof x.headers.get === 'function' &&
    typeof x.arrayBuffer === 'function'
  );
}

/** What a full download may buffer when the server declares no size (OpenOptions.maxBytes). */
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

/** @param {OpenOptions} opt */
function maxBytesOf(opt) {
  const m = opt.maxBytes;
  if (m === undefined) return undefined;
  if (typeof m !== 'number' || !Number.isSafeInteger(m) || m < 0)
    throw new RangeError(`openGGUF: maxBytes must be a non-negative safe integer, got ${String(m)}`);
  return m;
}

/**
 * The body of a 200 answer (a full download): exactly its Content-Length when it declares one
 * (and that is within maxBytes, when given), else read as it streams up to maxBytes
 * (DEFAULT_MAX_BYTES when not given), never holding more.
 * @param {Response} res @param {string} url @param {number | undefined} max
 * @param {AbortSignal | undefined} signal
 */
async function fullBody(res, url, max, signal) {
  const len = res.headers.get('content-length');
  const declared = len !== null && /^\s*\d+\s*$/.test(len) && Number.isSafeInteger(Number(len)) ? Number(len) : null;
  const limit = declared ?? max ?? DEFAULT_MAX_BYTES;
  if (declared !== null && max !== undefined && declared > max) {
    discard(res);
    throw new GGUFError('TOO_LARGE', 0, `${url}: the file is ${declared} bytes, more than maxBytes (${max})`);
  }
  try {
    if (declared !== null) return await bodyOf(res, declared, 0, url);
    const chunks = [];
    let got = 0;
    if (!res.body) {
      const b = new Uint8Array(await res.arrayBuffer());
      if (b.length > limit) throw tooLong(url, limit);
      return b;
    }
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      got += value.length;
      if (got > limit) {
        reader.cancel().catch(() => {});
        throw tooLong(url, limit);
      }
      chunks.push(value);
    }
    const out = new Uint8Array(got);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    if (e instanceof GGUFError) throw e;
    throw failed('NETWORK', 0, `${url}: the body broke off: ${/** @type {any} */ (e)?.message ?? e}`, e);
  }
}

/** @param {string} url @param {number} limit */
function tooLong(url, limit) {
  return new GGUFError(
    'TOO_LARGE',
    0,
    `${url}: the server declares no size and the body goes on past ${limit} bytes (maxBytes); pass a larger maxBytes to download more`,
  );
}

/**
 * An HTTP(S) URL read with Range requests. Every answer must be a 206 whose Content-Range is
 * exactly the range asked. The first answer must carry a strong validator (a strong ETag, else
 * Last-Modified) and every later one must repeat it with the same total, no validator differing;
 * later requests send If-Range with it. So pieces of two versions are never mixed: a file that
 * changed, or an answer that cannot show it did not, is refused (CHANGED). A server without a
 * strong validator (NO_VALIDATOR) or without Range support (NO_RANGE) is refused unless
 * allowFullDownload, which downloads the file whole in one answer (fullBody: at most its
 * Content-Length, or maxBytes).
 * @param {string} url
 * @param {OpenOptions} opt
 * @param {AbortSignal | undefined} signal
 */
async function urlSource(url, opt, signal) {
  const f = opt.fetch ?? globalThis.fetch;
  if (typeof f !== 'function') throw new TypeError('openGGUF: fetch must be a function');
  /** @type {{ etag: string | null, lastModified: string | null, size: number, strong: 'etag' | 'last-modified' } | null} */
  let first = null;
  // If-Range is not a CORS-safelisted header: on a cross-origin URL in a page or worker it would
  // need a preflight that many file hosts refuse. There the answers' validators are compared only.
  const here = /** @type {any} */ (globalThis).location?.href;
  const ifRange = !here || new URL(url).origin === new URL(here).origin;
  /** @param {number} o @param {number} n  n = 0: the whole file, without Range */
  const request = async (o, n) => {
    const headers = new Headers(opt.headers);
    if (n > 0) headers.set('Range', `bytes=${o}-${o + n - 1}`);
    // Byte ranges of the file itself, not of a compressed encoding (browsers decide this anyway).
    if (!headers.has('Accept-Encoding')) headers.set('Accept-Encoding', 'identity');
    // If-Range needs a strong validator: a strong ETag, else Last-Modified.
    const validator =
      ifRange && first && (first.etag && !first.etag.startsWith('W/') ? first.etag : first.lastModified);
    if (validator && n > 0) headers.set('If-Range', validator);
    let res;
    try {
      res = await f(url, { headers, signal });
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      throw failed('NETWORK', o, `${url}: ${/** @type {any} */ (e)?.message ?? e}`, e);
    }
    if (!isResponse(res))
      throw new GGUFError(
        'BAD_RESPONSE',
        o,
        `${url}: the fetch option returned ${res === null ? 'null' : typeof res}, not a Response`,
      );
    return { res, conditional: !!validator };
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
      // The answer must prove it is the representation first opened: the same strong validator
      // (a missing or weak one proves nothing), the same total, and no validator that differs.
      const proven = first.strong === 'etag' ? etag === first.etag : lm === first.lastModified;
      if (
        !proven ||
        total !== first.size ||
        (etag ?? first.etag) !== first.etag ||
        (lm ?? first.lastModified) !== first.lastModified
      )
        throw new GGUFError(
          'CHANGED',
          o,
          `${url} changed since it was opened, or the server cannot show it did not (size ${first.size} -> ${total}, ETag ${first.etag} -> ${etag}, Last-Modified ${first.lastModified} -> ${lm})`,
        );
    }
    return total;
  };

  /** The whole file from a 200 answer, never buffering past maxBytes. @param {Response} res */
  const whole = async (res) => {
    const all = await fullBody(res, url, maxBytesOf(opt), signal);
    return { ...bufferSource(all), name: url };
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
    return whole(res0);
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
  const etag0 = res0.headers.get('etag'),
    lm0 = res0.headers.get('last-modified');
  /** @type {'etag' | 'last-modified' | null} */
  const strong = etag0 && !etag0.startsWith('W/') ? 'etag' : lm0 ? 'last-modified' : null;
  if (!strong) {
    // Without a strong validator no later answer can show it comes from the same version of the
    // file: pieces of two versions could be mixed. One whole answer is one version.
    if (!opt.allowFullDownload)
      throw new GGUFError(
        'NO_VALIDATOR',
        0,
        `${url}: the server sends no strong ETag and no Last-Modified, so the pieces of a Range read cannot be checked to come from one version of the file; pass { allowFullDownload: true } to download it whole`,
      );
    const full = await request(0, 0);
    if (full.res.status !== 200) {
      discard(full.res);
      throw new GGUFError('HTTP', 0, `${url}: HTTP ${full.res.status} to a request for the whole file`);
    }
    return whole(full.res);
  }
  first = { etag: etag0, lastModified: lm0, size, strong };
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
 * (SHORT_READ, LONG_READ, BAD_READ, READ, and for URLs NETWORK, HTTP, NO_RANGE, NO_VALIDATOR,
 * BAD_RANGE, BAD_RESPONSE, CHANGED, TOO_LARGE); an abort of `options.signal` rejects with its reason, now and on every later read.
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
