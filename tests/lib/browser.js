// Headless Chromium (Debian's /usr/bin/chromium through playwright-core) on the demo page served
// by demo/server.js on 127.0.0.1, port 0: the launcher the demo's e2e test files share.
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
