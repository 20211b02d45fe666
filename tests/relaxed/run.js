// Opens tests/relaxed/index.html in headless Chromium (Debian's, through playwright-core) and
// returns what the page reports (window.result). Node-only.
import { firefoxResult, launchChromium } from '../lib/browser.js';
import { serveRepo } from './serve.js';

/**
 * @param {string} query the page's query string, e.g. '?seed=5' or '?bench=1'
 * @param {string} [page_] the page under tests/relaxed/ (threads.html: the relaxed threads check)
 * @returns {Promise<any>}
 */
export async function runPage(query, page_ = 'index.html') {
  const server = await serveRepo(0);
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  const browser = await launchChromium();
  try {
    const page = await browser.context.newPage();
    /** @type {string[]} */
    const errors = [];
    // A page that fails to load (a module that does not link, a script error) reports no result:
    // stop at its first error instead of waiting out the timeout.
    /** @type {(e: Error) => void} */
    let failed = () => {};
    const failure = new Promise((_, reject) => (failed = reject));
    failure.catch(() => {}); // (an error after the result is not a rejection nobody handles)
    page.on('pageerror', (e) => {
      errors.push(e.message);
      failed(new Error(`page error: ${e.message}`));
    });
    await page.goto(`http://127.0.0.1:${port}/tests/relaxed/${page_}${query}`);
    await Promise.race([
      failure,
      page.waitForFunction(() => /** @type {any} */ (window).result !== undefined, null, { timeout: 300000 }),
    ]);
    const result = await page.evaluate(() => /** @type {any} */ (window).result);
    return { ...result, pageErrors: errors };
  } finally {
    await browser.close();
    server.close();
  }
}

/**
 * The same page in headless Firefox (Debian's firefox-esr, started directly: it sends its result
 * back in a POST). Rejects after timeoutMs.
 * @param {string} query
 * @param {number} [timeoutMs]
 * @returns {Promise<any>}
 */
export async function runPageFirefox(query, timeoutMs = 300000) {
  /** @type {(v: any) => void} */
  let got = () => {};
  const result = new Promise((resolve) => (got = resolve));
  const server = await serveRepo(0, (v) => got(v));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  const url = `http://127.0.0.1:${port}/tests/relaxed/index.html${query}${query ? '&' : '?'}post=1`;
  try {
    return await firefoxResult(url, result, timeoutMs);
  } finally {
    server.close();
  }
}
