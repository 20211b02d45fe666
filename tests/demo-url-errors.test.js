// demo/url-errors.js with a stand-in fetch: a failed fetch whose no-cors HEAD probe gets an answer
// is "no CORS", one whose probe fails too is "no answer"; a server that ignores Range or sends no
// validator is asked its size by HEAD; the page's text names no API option; other errors and
// local files pass through unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explainOpenError, FULL_DOWNLOAD_LIMIT } from '../demo/url-errors.js';
import { GGUFError } from '../js/node.js';

const U = 'https://models.example/m.gguf';
/** A fetch that records its calls and answers with `answer(init)`. */
const fake = (/** @type {(init: RequestInit) => Response | Error} */ answer) => {
  /** @type {RequestInit[]} */
  const calls = [];
  const f = /** @type {typeof fetch} */ (
    /** @type {unknown} */ (
      async (/** @type {string} */ _u, /** @type {RequestInit} */ init) => {
        calls.push(init);
        const a = answer(init);
        if (a instanceof Error) throw a;
        return a;
      }
    )
  );
  return { f, calls };
};
const api = /allowFullDownload|maxBytes|pass \{/;

test('a failed fetch: no CORS when the no-cors probe is answered, no answer when it is not', async () => {
  const e = new GGUFError('NETWORK', 0, `${U}: Failed to fetch`);
  const ok = fake(() => new Response(null, { status: 200 }));
  const cors = /** @type {any} */ (await explainOpenError(e, U, ok.f));
  assert.equal(cors.detail.kind, 'cors');
  assert.match(cors.message, /answered, but the browser does not let this page read the answer/);
  assert.deepEqual([ok.calls[0].method, ok.calls[0].mode], ['HEAD', 'no-cors']);
  const down = fake(() => new TypeError('Failed to fetch'));
  const gone = /** @type {any} */ (await explainOpenError(e, [U, `${U}.2`], down.f));
  assert.equal(gone.detail.kind, 'unreachable');
  assert.match(
    gone.message,
    /no answer from models\.example: the connection was refused, the name does not resolve \(DNS\)/,
  );
  for (const m of [cors.message, gone.message]) assert.doesNotMatch(m, api);
  // A body that broke off mid-read is not a probe question: passed on as it is.
  const mid = new GGUFError('NETWORK', 100, `${U}: the body broke off: reset`);
  assert.equal(await explainOpenError(mid, U, ok.f), mid);
});

test('a server that cannot be read in pieces: its size by HEAD, the limit, no API names', async () => {
  for (const [code, kind, re] of /** @type {const} */ ([
    ['NO_RANGE', 'no-range', /does not answer byte-range requests/],
    ['NO_VALIDATOR', 'no-validator', /neither an ETag nor a Last-Modified/],
  ])) {
    const e = new GGUFError(code, 0, `${U}: ...; pass { allowFullDownload: true } to download the whole file`);
    const h = fake(() => new Response(null, { status: 200, headers: { 'content-length': '123456' } }));
    const x = /** @type {any} */ (await explainOpenError(e, U, h.f));
    assert.deepEqual(x.detail, { kind, url: U, size: 123456, limit: FULL_DOWNLOAD_LIMIT });
    assert.equal(x.code, code);
    assert.match(x.message, re);
    assert.doesNotMatch(x.message, api);
    assert.equal(h.calls[0].method, 'HEAD');
    // No size from the server: null (the page then says why it does not offer the download).
    const none = fake(() => new Response(null, { status: 200 }));
    assert.equal(/** @type {any} */ (await explainOpenError(e, U, none.f)).detail.size, null);
  }
  assert.equal(FULL_DOWNLOAD_LIMIT, 512 * 2 ** 20);
});

test('other errors, and files, pass through', async () => {
  const e = new GGUFError('BAD_MAGIC', 0, 'not a GGUF file');
  const f = fake(() => new Response(null));
  assert.equal(await explainOpenError(e, U, f.f), e);
  const net = new GGUFError('NETWORK', 0, 'x');
  assert.equal(await explainOpenError(net, new Blob([]), f.f), net);
  assert.equal(f.calls.length, 0);
});
