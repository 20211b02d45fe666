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
