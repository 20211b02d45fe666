// Loopback HTTP servers for the byte-source tests: a well-behaved Range server whose every answer
// can be bent by a hook, to check that openGGUF refuses each way a server can hand back wrong data.

import { createServer } from 'node:http';

/**
 * @typedef {object} Answer what the server is about to send for one request; a hook may edit it
 * @property {number} status
 * @property {Record<string, string | number>} headers
 * @property {Uint8Array} body
 * @property {'end' | 'reset' | 'stall'} [finish] how the body ends: normally, by resetting the
 *   connection after half the body, or by sending half the body and never finishing
 *
 * @typedef {object} Request what the client asked for
 * @property {number} n the request's index, from 0
 * @property {number} [start]
 * @property {number} [end] inclusive
 * @property {import('node:http').IncomingHttpHeaders} headers
 */

/**
 * Serves `bytes` with Range support (206 with Content-Range, an ETag and Last-Modified, and
 * If-Range honoured) on 127.0.0.1, port 0. `hook(request, answer)` may change the answer.
 * Close it with `await server.close()`.
 * @param {Uint8Array} bytes
 * @param {(req: Request, a: Answer) => void} [hook]
 */
export async function rangeServer(bytes, hook = () => {}) {
  /** @type {Request[]} */
  const log = [];
  let served = 0;
  const server = createServer((req, res) => {
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    /** @type {Request} */
    const r = { n: log.length, headers: req.headers };
    log.push(r);
    const validators = { etag: '"v1"', 'last-modified': 'Tue, 01 Dec 2026 00:00:00 GMT' };
    /** @type {Answer} */
    let a;
    const ifRange = req.headers['if-range'];
    const current = !ifRange || ifRange === validators.etag || ifRange === validators['last-modified'];
    if (m && current && Number(m[1]) < bytes.length) {
      const start = Number(m[1]);
      const end = Math.min(Number(m[2]), bytes.length - 1);
      Object.assign(r, { start, end });
      a = {
        status: 206,
        headers: { ...validators, 'content-range': `bytes ${start}-${end}/${bytes.length}` },
        body: bytes.subarray(start, end + 1),
      };
    } else {
      a = { status: 200, headers: { ...validators }, body: bytes };
    }
    hook(r, a);
    served += a.body.length;
    const finish = a.finish ?? 'end';
    // Content-Length unless the hook set one or chose a chunked body (whose length nothing states).
    if (finish === 'end' && !('content-length' in a.headers) && !('transfer-encoding' in a.headers))
      a.headers['content-length'] = a.body.length;
    res.writeHead(a.status, a.headers);
    if (finish === 'end') res.end(Buffer.from(a.body));
    else {
      res.write(Buffer.from(a.body.subarray(0, a.body.length >> 1)));
      if (finish === 'reset') setTimeout(() => req.socket.destroy(), 20);
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(undefined)));
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  return {
    url: `http://127.0.0.1:${port}/model.gguf`,
    /** Every request so far. */
    log,
    /** Body bytes the server has sent (or started to send). */
    get served() {
      return served;
    },
    close() {
      server.closeAllConnections();
      return new Promise((ok) => server.close(() => ok(undefined)));
    },
  };
}
