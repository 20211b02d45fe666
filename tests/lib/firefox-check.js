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
  const demo = createDemoServer();
  /** @type {(v: any) => void} */
  let got = () => {};
  const result = new Promise((resolve) => (got = resolve));
  const server = createServer((req, res) => {
    const fx = /^\/fx\/([^/?]+)$/.exec(req.url ?? '');
    if (req.method === 'POST' && req.url === '/result') {
      let data = '';
      req.setEncoding('utf8');
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        res.writeHead(204).end();
        got(JSON.parse(data));
      });
    } else if (req.method === 'GET' && req.url === '/check.html') {
      // Isolated as the demo is (COOP, COEP credentialless), so its frames can be too.
      res
        .writeHead(200, {
          'Content-Type': 'text/html; charset=utf-8',
          'Cache-Control': 'no-store',
          'Cross-Origin-Opener-Policy': 'same-origin',
          'Cross-Origin-Embedder-Policy': 'credentialless',
        })
        .end(html);
    } else if (req.method === 'GET' && fx && files[fx[1]]) {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(Buffer.from(files[fx[1]]));
    } else demo.emit('request', req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  try {
    return await firefoxResult(`http://127.0.0.1:${port}/check.html`, result, 240000);
  } finally {
    server.close();
  }
}
