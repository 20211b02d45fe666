// openGGUF over HTTP Range requests against loopback servers that misbehave in each way a server
// can: wrong Content-Range, short or long bodies, a file that changes between requests, resets,
// stalls, no Range support. Each is a GGUFError with a code (or the abort reason), never wrong data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openGGUF, parseGGUF, writeGGUF, GGUFError, GGMLType, GGUFValueType as VT } from '../js/index.js';
import { rangeServer } from './lib/http-servers.js';
import { sample, q8Rows } from './lib/source-fixtures.js';

const T = { timeout: 20000 }; // a hang fails the test instead of the whole run

/** @param {string} code */
const gguf = (code) => (/** @type {any} */ e) => e instanceof GGUFError && e.code === code;

/**
 * Opens the sample through a server whose answers after the first `after` requests go through
 * `hook`, then reads rows 1..2 of 'w'.
 * @param {(r: import('./lib/http-servers.js').Request, a: import('./lib/http-servers.js').Answer) => void} hook
 * @param {object} [opt]
 */
async function readThrough(hook, opt = {}) {
  const { bytes } = sample();
  let armed = false;
  const s = await rangeServer(bytes, (r, a) => armed && hook(r, a));
  try {
    const f = await openGGUF(s.url, opt);
    armed = true;
    return await f.readRows('w', 1, 2);
  } finally {
    await s.close();
  }
}

test('a well-behaved server: exact ranges, If-Range with the first ETag', T, async () => {
  const { bytes } = sample();
  const s = await rangeServer(bytes);
  try {
    const f = await openGGUF(s.url);
    assert.deepEqual(await f.readRows('w', 1, 2), parseGGUF(bytes).tensorBytes('w').subarray(68, 204));
    assert.ok(s.log.length >= 2);
    for (const r of s.log.slice(1)) assert.equal(r.headers['if-range'], '"v1"');
  } finally {
    await s.close();
  }
});

test('a weak ETag is compared but not sent in If-Range (Last-Modified is)', T, async () => {
  const { bytes } = sample();
  const s = await rangeServer(bytes, (r, a) => {
    a.headers.etag = 'W/"v1"';
  });
  try {
    const f = await openGGUF(s.url);
    assert.equal((await f.readTensor('w')).length, 2176);
    for (const r of s.log.slice(1)) assert.equal(r.headers['if-range'], 'Tue, 01 Dec 2026 00:00:00 GMT');
  } finally {
    await s.close();
  }
  await assert.rejects(
    readThrough((r, a) => {
      a.headers.etag = 'W/"v2"';
    }),
    gguf('CHANGED'),
  );
});

test('a wrong Content-Range start, end or total is refused', T, async () => {
  const shift = (/** @type {number} */ ds, /** @type {number} */ de, /** @type {number} */ dt) => (r, a) => {
    a.headers['content-range'] = `bytes ${r.start + ds}-${r.end + de}/${sample().bytes.length + dt}`;
  };
  await assert.rejects(readThrough(shift(1, 0, 0)), gguf('BAD_RANGE'));
  await assert.rejects(readThrough(shift(0, -1, 0)), gguf('BAD_RANGE'));
  await assert.rejects(readThrough(shift(0, 1, 0)), gguf('BAD_RANGE'));
  await assert.rejects(readThrough(shift(0, 0, 1)), gguf('CHANGED'));
  await assert.rejects(
    readThrough((r, a) => {
      a.headers['content-range'] = 'bytes */2500';
    }),
    gguf('BAD_RANGE'),
  );
});

test('a body shorter or longer than asked is refused', T, async () => {
  await assert.rejects(
    readThrough((r, a) => {
      a.body = a.body.subarray(0, a.body.length - 1);
    }),
    gguf('SHORT_READ'),
  );
  // Content-Range right, body longer (chunked: no Content-Length states its length).
  await assert.rejects(
    readThrough((r, a) => {
      a.body = sample().bytes.subarray(r.start, r.end + 100);
      a.headers['transfer-encoding'] = 'chunked';
    }),
    gguf('LONG_READ'),
  );
});

test('a body far longer than asked is not read to its end', T, async () => {
  const big = writeGGUF({
    kv: [],
    tensors: [{ name: 'w', type: GGMLType.Q8_0, dims: [64, 1024 * 32], data: q8Rows(1024 * 32) }],
  });
  let armed = false;
  const s = await rangeServer(big, (r, a) => {
    if (!armed) return;
    a.body = big.subarray(r.start); // Content-Range says one row, the body runs to the file's end
    a.headers['transfer-encoding'] = 'chunked';
  });
  try {
    const f = await openGGUF(s.url);
    armed = true;
    await assert.rejects(f.readRows('w', 0, 1), gguf('LONG_READ'));
  } finally {
    await s.close();
  }
});

test('a file that changes between requests is CHANGED, never mixed', T, async () => {
  // A new ETag.
  await assert.rejects(
    readThrough((r, a) => {
      a.headers.etag = '"v2"';
    }),
    gguf('CHANGED'),
  );
  // A new Last-Modified.
  await assert.rejects(
    readThrough((r, a) => {
      a.headers['last-modified'] = 'Wed, 02 Dec 2026 00:00:00 GMT';
    }),
    gguf('CHANGED'),
  );
  // The server honours If-Range: the file changed, so it sends the whole new file with 200.
  await assert.rejects(
    readThrough((r, a) => {
      a.status = 200;
      a.headers = { etag: '"v2"' };
      a.body = sample().bytes;
    }),
    gguf('CHANGED'),
  );
});

test('network failures are NETWORK with the original error as cause', T, async () => {
  await assert.rejects(
    readThrough((r, a) => {
      a.finish = 'reset';
      a.headers['content-length'] = a.body.length;
    }),
    (e) => gguf('NETWORK')(e) && /** @type {any} */ (e).cause instanceof Error,
  );
  const s = await rangeServer(sample().bytes);
  const url = s.url;
  await s.close();
  await assert.rejects(openGGUF(url), (e) => gguf('NETWORK')(e) && /** @type {any} */ (e).cause instanceof Error);
  const boom = new TypeError('fetch failed');
  await assert.rejects(
    openGGUF('http://127.0.0.1:9/x.gguf', {
      fetch: async () => {
        throw boom;
      },
    }),
    (e) => gguf('NETWORK')(e) && /** @type {any} */ (e).cause === boom,
  );
});

test('a stalled server is abandoned through the signal, with its reason', T, async () => {
  const why = new Error('give up');
  const c = new AbortController();
  const p = readThrough(
    (r, a) => {
      a.finish = 'stall';
      a.headers['content-length'] = a.body.length;
      setTimeout(() => c.abort(why), 20);
    },
    { signal: c.signal },
  );
  await assert.rejects(p, (e) => e === why);
  const { bytes } = sample();
  const s = await rangeServer(bytes, (r, a) => {
    a.finish = 'stall';
    a.headers['content-length'] = a.body.length;
  });
  try {
    await assert.rejects(openGGUF(s.url, { signal: AbortSignal.timeout(50) }), (e) => e.name === 'TimeoutError');
  } finally {
    await s.close();
  }
});

test('a server without Range support: NO_RANGE, or with allowFullDownload an exact body', T, async () => {
  const { bytes } = sample();
  const s = await rangeServer(bytes, (r, a) => {
    a.status = 200;
    a.headers = {};
    a.body = bytes;
  });
  try {
    await assert.rejects(openGGUF(s.url), gguf('NO_RANGE'));
    const f = await openGGUF(s.url, { allowFullDownload: true });
    assert.deepEqual(await f.readTensor('w'), parseGGUF(bytes).tensorBytes('w'));
  } finally {
    await s.close();
  }
  // A body shorter or longer than its Content-Length.
  for (const len of [bytes.length + 1, bytes.length - 1]) {
    const fetch = async () => new Response(bytes, { status: 200, headers: { 'content-length': String(len) } });
    await assert.rejects(
      openGGUF('http://127.0.0.1:9/x.gguf', { fetch, allowFullDownload: true }),
      gguf(len > bytes.length ? 'SHORT_READ' : 'LONG_READ'),
    );
  }
});

test('the header is read incrementally over HTTP: O(log size) requests, each byte once', T, async () => {
  const vocab = Array.from({ length: 300000 }, (_, i) => `▁token${i}`);
  const bytes = writeGGUF({
    kv: [{ key: 'tokenizer.ggml.tokens', type: VT.ARRAY, itemType: VT.STRING, value: vocab }],
    tensors: [{ name: 'w', type: GGMLType.Q8_0, dims: [64, 32], data: q8Rows(32) }],
  });
  const header = parseGGUF(bytes).dataOffset;
  const s = await rangeServer(bytes);
  try {
    const f = await openGGUF(s.url);
    assert.equal(f.metadata.get('tokenizer.ggml.tokens').length, 300000);
    const ranges = s.log.map((r) => [r.start, r.end]);
    let end = 0;
    for (const [a, b] of ranges.slice(1)) {
      assert.equal(a, end, `request at ${a}, expected ${end}`);
      end = b + 1;
    }
    const last = ranges[ranges.length - 1];
    assert.ok(s.served - (last[1] - last[0] + 1) < header + 1, `${s.served} bytes served for ${header}`);
    assert.ok(s.log.length <= Math.ceil(Math.log2(header / (1 << 20))) + 3, `${s.log.length} requests`);
  } finally {
    await s.close();
  }
});

test('in a page, If-Range goes only to the same origin (it is not CORS-safelisted)', T, async () => {
  const { bytes } = sample();
  const s = await rangeServer(bytes);
  const g = /** @type {any} */ (globalThis);
  try {
    for (const [href, sent] of [
      [new URL('/index.html', s.url).href, '"v1"'],
      ['http://localhost:1/index.html', undefined],
    ]) {
      g.location = { href };
      const before = s.log.length;
      const f = await openGGUF(s.url);
      await f.readTensor('w');
      for (const r of s.log.slice(before + 1)) assert.equal(r.headers['if-range'], sent, href);
    }
  } finally {
    delete g.location;
    await s.close();
  }
  // Cross-origin, a changed file is still caught by its validators.
  g.location = { href: 'http://localhost:1/index.html' };
  try {
    await assert.rejects(
      readThrough((r, a) => {
        a.headers.etag = '"v2"';
      }),
      gguf('CHANGED'),
    );
  } finally {
    delete g.location;
  }
});

/**
 * Opens `bytes` through a server whose first answer carries `first` validators and later answers
 * `later` ones (undefined: the header left out), the server ignoring If-Range, and later answers
 * serving `laterBytes`; returns what reading rows 1..2 of 'w' gives, or its rejection.
 * @param {Record<string, string>} first @param {Record<string, string>} later
 * @param {Uint8Array} [laterBytes]
 */
async function validatorsThrough(first, later, laterBytes) {
  const { bytes } = sample();
  const other = laterBytes ?? bytes;
  const s = await rangeServer(bytes, (r, a) => {
    const h = r.n === 0 ? first : later;
    delete a.headers.etag;
    delete a.headers['last-modified'];
    Object.assign(a.headers, h);
    if (r.n > 0 && r.start !== undefined) {
      // A server that ignores If-Range: it answers the range of whatever it has now.
      a.status = 206;
      a.body = other.subarray(r.start, /** @type {number} */ (r.end) + 1);
      a.headers['content-range'] = `bytes ${r.start}-${r.end}/${other.length}`;
    }
  });
  try {
    const f = await openGGUF(s.url);
    return await f.readRows('w', 1, 2);
  } finally {
    await s.close();
  }
}

test(
  'a later answer must prove it is the file first opened: validators that vanish or go weak are CHANGED',
  T,
  async () => {
    const { bytes } = sample();
    // The same size, other bytes: what a mixed read would return.
    const other = bytes.slice();
    for (let i = bytes.length - 64; i < bytes.length; i++) other[i] ^= 0x5a;
    const lm = 'Tue, 01 Dec 2026 00:00:00 GMT';
    // The first answer had a strong ETag: a later one without any validator, with only
    // Last-Modified, or with the weak form of the ETag proves nothing.
    for (const later of [{}, { 'last-modified': lm }, { etag: 'W/"v1"' }])
      await assert.rejects(validatorsThrough({ etag: '"v1"' }, later, other), gguf('CHANGED'), JSON.stringify(later));
    // The first had only Last-Modified: a later one without it proves nothing.
    await assert.rejects(validatorsThrough({ 'last-modified': lm }, {}, other), gguf('CHANGED'));
    await assert.rejects(
      validatorsThrough({ etag: '"v1"', 'last-modified': lm }, { 'last-modified': lm }, other),
      gguf('CHANGED'),
    );
    // The same strong validator: the right rows.
    const want = await (await openGGUF(bytes)).readRows('w', 1, 2);
    assert.deepEqual(await validatorsThrough({ etag: '"v1"' }, { etag: '"v1"' }), want);
    assert.deepEqual(await validatorsThrough({ 'last-modified': lm }, { 'last-modified': lm }), want);
    assert.deepEqual(await validatorsThrough({ etag: 'W/"v1"', 'last-modified': lm }, { 'last-modified': lm }), want);
  },
);

test(
  'a server with a weak ETag or no validator cannot prove two answers are one file: NO_VALIDATOR, or a full download',
  T,
  async () => {
    const { bytes } = sample();
    const other = bytes.slice();
    for (let i = bytes.length - 64; i < bytes.length; i++) other[i] ^= 0x5a;
    for (const v of [{ etag: 'W/"same"' }, {}]) {
      // Read in pieces, a constant weak ETag (or none) would let another version's bytes through.
      await assert.rejects(validatorsThrough(v, v, other), gguf('NO_VALIDATOR'), JSON.stringify(v));
      // One answer is one version: with allowFullDownload the file is downloaded whole instead.
      const s = await rangeServer(bytes, (r, a) => {
        delete a.headers.etag;
        delete a.headers['last-modified'];
        Object.assign(a.headers, v);
      });
      try {
        const f = await openGGUF(s.url, { allowFullDownload: true });
        assert.deepEqual(await f.readRows('w', 1, 2), await (await openGGUF(bytes)).readRows('w', 1, 2));
        assert.equal(s.log.filter((r) => r.start === undefined).length, 1, 'one full request');
      } finally {
        await s.close();
      }
    }
  },
);

test('a redirect to a different object of the same size is CHANGED', T, async () => {
  const { bytes } = sample();
  const other = bytes.slice();
  for (let i = bytes.length - 64; i < bytes.length; i++) other[i] ^= 0x5a;
  let n = 0;
  /** @type {typeof fetch} */
  const fetch = async (url, init) => {
    const target = n++ === 0 ? 'http://127.0.0.1:9/a.gguf' : 'http://127.0.0.1:9/b.gguf';
    const src = n === 1 ? bytes : other;
    const m = /^bytes=(\d+)-(\d+)$/.exec(new Headers(init?.headers).get('range') ?? '');
    const start = Number(m?.[1]),
      end = Math.min(Number(m?.[2]), src.length - 1);
    const res = new Response(src.slice(start, end + 1), {
      status: 206,
      headers: { 'content-range': `bytes ${start}-${end}/${src.length}`, etag: n === 1 ? '"a"' : '"b"' },
    });
    Object.defineProperty(res, 'url', { value: target });
    return res;
  };
  const f = await openGGUF('http://127.0.0.1:9/model.gguf', { fetch }).catch((e) => e);
  // Either the header read already crossed the redirect (CHANGED), or the rows read does.
  if (f instanceof Error) assert.ok(gguf('CHANGED')(f), String(f));
  else await assert.rejects(f.readRows('w', 1, 2), gguf('CHANGED'));
});

test('a full download never holds more than the declared size, or maxBytes when there is none', T, async () => {
  // An endless 200 body without Content-Length: refused at maxBytes, its stream cancelled.
  let pulled = 0;
  let cancelled = false;
  const endless = () =>
    new ReadableStream({
      pull(c) {
        pulled += 1 << 16;
        c.enqueue(new Uint8Array(1 << 16));
      },
      cancel() {
        cancelled = true;
      },
    });
  const fetch = async () => new Response(endless(), { status: 200 });
  await assert.rejects(
    openGGUF('http://127.0.0.1:9/x.gguf', { fetch, allowFullDownload: true, maxBytes: 1 << 20 }),
    gguf('TOO_LARGE'),
  );
  assert.ok(cancelled, 'the body is cancelled');
  assert.ok(pulled <= (1 << 20) + (4 << 16), `pulled ${pulled} bytes`);
  // The default bound (no maxBytes) holds too, at DEFAULT_MAX_BYTES.
  pulled = 0;
  cancelled = false;
  const { DEFAULT_MAX_BYTES } = await import('../js/sources.js');
  await assert.rejects(openGGUF('http://127.0.0.1:9/x.gguf', { fetch, allowFullDownload: true }), gguf('TOO_LARGE'));
  assert.ok(cancelled && pulled <= DEFAULT_MAX_BYTES + (4 << 16), `pulled ${pulled} bytes`);
  // A declared size past maxBytes is refused before the body is read.
  const { bytes } = sample();
  const declared = async () =>
    new Response(bytes, { status: 200, headers: { 'content-length': String(bytes.length) } });
  await assert.rejects(
    openGGUF('http://127.0.0.1:9/x.gguf', { fetch: declared, allowFullDownload: true, maxBytes: 100 }),
    gguf('TOO_LARGE'),
  );
  // An undeclared size within maxBytes is read whole.
  const chunked = async () => new Response(new Blob([bytes]).stream(), { status: 200 });
  const f = await openGGUF('http://127.0.0.1:9/x.gguf', { fetch: chunked, allowFullDownload: true });
  assert.deepEqual(await f.readTensor('w'), parseGGUF(bytes).tensorBytes('w'));
  await assert.rejects(
    openGGUF('http://127.0.0.1:9/x.gguf', { fetch, allowFullDownload: true, maxBytes: -1 }),
    RangeError,
  );
});

test('a fetch option that returns something other than a Response is a clear GGUFError', T, async () => {
  for (const bad of [undefined, null, 42, { status: 206 }, 'x'])
    await assert.rejects(
      openGGUF('http://127.0.0.1:9/x.gguf', { fetch: /** @type {any} */ (async () => bad) }),
      (e) => gguf('BAD_RESPONSE')(e) && /not a Response/.test(/** @type {Error} */ (e).message),
      String(bad),
    );
});
