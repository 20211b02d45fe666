// A static server for the relaxed-build page (tests/relaxed.test.js, bench/relaxed.js): the
// repository's files on 127.0.0.1, on the port given (0: any free one). Node-only.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join, normalize, sep } from 'node:path';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TYPES = { '.js': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };

/**
 * Starts the server; resolves once it listens. A POST to /result goes to onResult, parsed.
 * @param {number} [port]
 * @param {(value: any) => void} [onResult]
 * @returns {Promise<import('node:http').Server>}
 */
export function serveRepo(port = 0, onResult = () => {}) {
  const server = createServer(async (req, res) => {
    if (req.method === 'POST' && req.url === '/result') {
      let body = '';
      for await (const chunk of req) body += chunk;
      res.writeHead(204).end();
      onResult(JSON.parse(body));
      return;
    }
    const path = normalize(join(ROOT, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    const ext = path.slice(path.lastIndexOf('.'));
    if (!path.startsWith(ROOT) || path.includes(`${sep}node_modules${sep}`) || !(ext in TYPES)) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(path);
      // cross-origin isolated, so that init({ threads }) has shared memory (tests/relaxed/threads.js)
      res
        .writeHead(200, {
          'content-type': TYPES[ext],
          'cross-origin-opener-policy': 'same-origin',
          'cross-origin-embedder-policy': 'require-corp',
        })
        .end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}
