// A check page in headless Firefox ESR beside the demo (Playwright cannot drive that build): the
// page's script drives the demo in frames and POSTs what it saw to /result; this serves the demo,
// the page at /check.html and fixture files under /fx/, and resolves with the posted result.
import { createServer } from 'node:http';
import { createDemoServer } from '../../demo/server.js';
import { firefoxResult } from './browser.js';

/**
 * The helpers a check page's module script starts with: until(f, what) polls f until it returns a
 * truthy value; post(r) sends the result.
 */
export const CHECK_HELPERS = `
const until = async (f, what, ms = 120000) => {
  const t0 = Date.now();
  for (;;) {
    try { const v = f(); if (v) return v; } catch {}
    if (Date.now() - t0 > ms) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 100));
  }
};
const post = (r) => fetch('/result', { method: 'POST', body: JSON.stringify(r) });
`;

/**
 * Serves a check page beside the demo, runs it in Firefox and resolves with what it posted to
 * /result.
 * @param {string} html the whole page, served at /check.html
 * @param {object} [options]
 * @param {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => boolean} [options.route]
 *   answers a request of the test's own (fixture files) and returns true, or returns false
 * @param {boolean} [options.isolate] serve the page cross-origin isolated as the demo is (COOP,
 *   COEP credentialless), so its frames can be too
 * @param {number} [options.timeoutMs] how long the page may take (default 240 s)
 * @returns {Promise<any>}
 */
export async function firefoxPage(html, { route = () => false, isolate = false, timeoutMs = 240000 } = {}) {
  const demo = createDemoServer();
  /** @type {(v: any) => void} */
  let got = () => {};
  const result = new Promise((resolve) => (got = resolve));
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/result') {
      let data = '';
      req.setEncoding('utf8');
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        res.writeHead(204).end();
        got(JSON.parse(data));
      });
    } else if (req.method === 'GET' && req.url === '/check.html') {
      /** @type {Record<string, string>} */
      const headers = { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' };
      if (isolate) {
        headers['Cross-Origin-Opener-Policy'] = 'same-origin';
        headers['Cross-Origin-Embedder-Policy'] = 'credentialless';
      }
      res.writeHead(200, headers).end(html);
    } else if (!route(req, res)) demo.emit('request', req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  try {
    return await firefoxResult(`http://127.0.0.1:${port}/check.html`, result, timeoutMs);
  } finally {
    server.close();
  }
}

/**
 * Runs a check page in Firefox and resolves with what it posted.
 * @param {string} body the check page's module script (CHECK_HELPERS are in scope)
 * @param {Record<string, Uint8Array>} [files] served at /fx/<name>, whole (HTTP 200)
 * @returns {Promise<any>}
 */
export async function firefoxCheck(body, files = {}) {
  const html = `<!doctype html><meta charset="utf-8"><title>check</title><body style="margin:0">
<script type="module">${CHECK_HELPERS}
try {
${body}
} catch (e) {
  await post({ ok: false, error: String((e && e.stack) || e) });
}
</script>`;
  return firefoxPage(html, {
    isolate: true,
    route(req, res) {
      const fx = /^\/fx\/([^/?]+)$/.exec(req.url ?? '');
      if (req.method !== 'GET' || !fx || !files[fx[1]]) return false;
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(Buffer.from(files[fx[1]]));
      return true;
    },
  });
}
