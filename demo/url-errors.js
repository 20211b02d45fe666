// Why a URL did not open, in words for the page (worker side): a fetch that failed is told apart
// by a second, no-cors probe (it succeeds when the server answered but the browser withheld the
// answer: no CORS; it fails too when there was no answer: refused, DNS, offline); a server that
// ignores Range (or cannot show its pieces are one version) is asked for the file's size so the
// page can offer to download it whole. No API option names reach the page.

/** The largest file the page offers to download whole (it is held in memory). */
export const FULL_DOWNLOAD_LIMIT = 512 * 2 ** 20;

/**
 * What the page is told about a failed open: kind, and for a server the page cannot read in pieces
 * the file's size (null when the server does not say).
 * @typedef {{ kind: 'cors' | 'unreachable' | 'no-range' | 'no-validator', url: string, size: number | null,
 *   limit: number }} UrlProblem
 */

/**
 * The error to show for a failed open of `source`: a new Error whose message says which of the
 * cases above it is, with `code` kept and `detail` (UrlProblem) added; the error itself otherwise.
 * @param {unknown} e what openGGUF threw
 * @param {unknown} source what was opened
 * @param {typeof fetch} [f] the fetch to probe with
 * @returns {Promise<unknown>}
 */
export async function explainOpenError(e, source, f = fetch) {
  const url = [source].flat().find((x) => typeof x === 'string');
  const code = typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
  const message = typeof e === 'object' && e !== null && 'message' in e ? String(e.message) : String(e);
  if (typeof url !== 'string' || !/^https?:/i.test(url)) return e;
  const host = new URL(url).host;
  /** @param {UrlProblem['kind']} kind @param {string} text @param {number | null} [size] */
  const explained = (kind, text, size = null) =>
    Object.assign(new Error(text), { code, detail: { kind, url, size, limit: FULL_DOWNLOAD_LIMIT } });
  if (code === 'NETWORK' && !/body broke off/.test(message)) {
    // HEAD: an answer without a body (nothing to download, nothing for the browser to withhold).
    const answered = await f(url, {
      method: 'HEAD',
      mode: 'no-cors',
      cache: 'no-store',
      signal: AbortSignal.timeout(15000),
    }).then(
      () => true,
      () => false,
    );
    return answered
      ? explained(
          'cors',
          `${url}: ${host} answered, but the browser does not let this page read the answer: the server sends no CORS header (Access-Control-Allow-Origin) allowing other sites. Download the file and open it from disk, or use a host that sends that header`,
        )
      : explained(
          'unreachable',
          `${url}: no answer from ${host}: the connection was refused, the name does not resolve (DNS), or the network is down. Check the address`,
        );
  }
  if (code === 'NO_RANGE' || code === 'NO_VALIDATOR') {
    // The size, from a HEAD request (Content-Length is readable across origins).
    const size = await f(url, { method: 'HEAD', cache: 'no-store', signal: AbortSignal.timeout(15000) }).then(
      (r) => {
        const n = Number(r.headers.get('content-length'));
        return r.ok && Number.isSafeInteger(n) && n > 0 ? n : null;
      },
      () => null,
    );
    return explained(
      code === 'NO_RANGE' ? 'no-range' : 'no-validator',
      code === 'NO_RANGE'
        ? `${url}: the server does not answer byte-range requests (it sent the whole file, HTTP 200, when one byte was asked for), so the page cannot read just the parts it needs`
        : `${url}: the server sends neither an ETag nor a Last-Modified date, so parts read at different times cannot be checked to come from the same version of the file`,
      size,
    );
  }
  return e;
}
