// Main-thread long tasks of a page in headless Chromium, measured two ways (as e2e-perf explains):
// a 'longtask' PerformanceObserver in the page (wall time, which on a shared 2-core host also
// counts the time other processes had the core) and a Chromium trace of the renderer's main
// thread, whose RunTask events carry the thread's own CPU time. Tests assert on the CPU time and
// print the observer's entries beside it.
import assert from 'node:assert/strict';

/**
 * Installs the observer on every document the page loads: window.__longTasks collects
 * { start, duration } (ms).
 * @param {import('playwright-core').Page} page
 */
export function observeLongTasks(page) {
  return page.addInitScript(() => {
    /** @type {any} */ (window).__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        /** @type {any} */ (window).__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
}

/**
 * Runs act under a trace and returns the renderer main thread's tasks ({ wall, cpu } ms) and the
 * observer's long tasks that started meanwhile.
 * @param {import('playwright-core').Page} page
 * @param {import('playwright-core').CDPSession} cdp a session of that page
 * @param {() => Promise<unknown>} act
 */
export async function mainThreadTasks(page, cdp, act) {
  const t0 = await page.evaluate(() => performance.now());
  /** @type {any[]} */
  const events = [];
  const collect = (/** @type {any} */ d) => events.push(...d.value);
  cdp.on('Tracing.dataCollected', collect);
  const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', {
    categories: 'devtools.timeline,disabled-by-default-devtools.timeline',
    transferMode: 'ReportEvents',
  });
  try {
    await act();
  } finally {
    await cdp.send('Tracing.end');
    await complete;
    cdp.off('Tracing.dataCollected', collect);
  }
  const main = new Set(
    events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`),
  );
  assert.ok(main.size > 0, 'the trace names the renderer main thread');
  const tasks = events
    .filter((e) => e.ph === 'X' && e.name === 'RunTask' && main.has(`${e.pid}:${e.tid}`))
    .map((e) => ({ wall: e.dur / 1000, cpu: (e.tdur ?? e.dur) / 1000 }));
  assert.ok(tasks.length > 0, 'the trace holds main-thread tasks');
  const observed = await page.evaluate(
    (t0) => /** @type {any} */ (window).__longTasks.filter((/** @type {any} */ e) => e.start >= t0),
    t0,
  );
  return { tasks, observed };
}
