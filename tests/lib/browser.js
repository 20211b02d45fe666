// Headless Chromium (Debian's /usr/bin/chromium through playwright-core) on the demo page served
// by demo/server.js on 127.0.0.1, port 0: the launcher the demo's e2e test files share; and
// headless Firefox ESR for pages that report their result back to the test's server.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../../demo/server.js';

/**
 * Headless Chromium with a fresh profile; `close` ends it and removes the profile.
 * @param {{ width?: number, height?: number }} [viewport]
 */
export async function launchChromium(viewport = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'bq-chromium-'));
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
    viewport: { width: viewport.width ?? 1440, height: viewport.height ?? 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts the demo server and a browser; `close` ends both and removes the profile.
 * @param {{ width?: number, height?: number }} [viewport]
 */
export async function launchDemo(viewport = {}) {
  const server = await startServer({ port: 0 });
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  const browser = await launchChromium(viewport);
  const { context } = browser;
  /** Page errors and console errors seen on any page of the context. */
  const problems = /** @type {string[]} */ ([]);
  const newPage = async () => {
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    return page;
  };
  return {
    base: `http://127.0.0.1:${port}/demo/`,
    context,
    newPage,
    problems,
    async close() {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Waits until the page has no task running (body[data-ready=true]). */
export function ready(/** @type {import('playwright-core').Page} */ page, timeout = 30000) {
  return page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout });
}

/**
 * Types q into the vocabulary browser's search and returns the rows it shows (their data
 * attributes and token text) once the list answers that query.
 * @param {import('playwright-core').Page} page
 * @param {string} q
 * @returns {Promise<Record<string, string>[]>}
 */
export async function vocabSearch(page, q) {
  await page.fill('[data-testid=vocab-search]', q);
  await page.waitForFunction(
    (q) =>
      /** @type {HTMLElement} */ (document.querySelector('#vocab')).dataset.query === q &&
      document.querySelector('[data-testid=vocab-row]'),
    q,
  );
  return page.$$eval('[data-testid=vocab-row]', (rs) =>
    rs.map((r) => ({ .../** @type {HTMLElement} */ (r).dataset, text: r.children[1].textContent ?? '' })),
  );
}

/**
 * Waits until the page is ready with the block inspector open on a block of format.
 * @param {import('playwright-core').Page} page
 * @param {string} format
 * @param {number} [timeout]
 */
export function inspected(page, format, timeout = 30000) {
  return page.waitForFunction(
    (f) => {
      const ins = /** @type {HTMLElement} */ (document.querySelector('[data-testid=block-inspector]'));
      return document.body.dataset.ready === 'true' && !ins.hidden && ins.dataset.format === f;
    },
    format,
    { timeout },
  );
}

/**
 * Opens url in headless Firefox ESR (Debian's, started directly: Playwright cannot drive that
 * build) with a fresh profile, and resolves with what result resolves to (the page's report,
 * received by the caller's server); rejects after timeoutMs. Firefox has exited and its profile
 * is gone when this settles.
 * @param {string} url
 * @param {Promise<any>} result
 * @param {number} timeoutMs
 * @returns {Promise<any>}
 */
export async function firefoxResult(url, result, timeoutMs) {
  const dir = mkdtempSync(join(tmpdir(), 'bq-firefox-'));
  const ff = spawn('firefox-esr', ['--headless', '--no-remote', '--profile', dir, url], { stdio: 'ignore' });
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    return await Promise.race([
      result,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('Firefox sent no result')), timeoutMs))),
    ]);
  } finally {
    clearTimeout(timer);
    ff.kill();
    await new Promise((resolve) => (ff.exitCode !== null ? resolve(undefined) : ff.once('exit', resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
}
