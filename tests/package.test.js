// The package as a user gets it: `npm pack`, the tarball installed into a fresh project outside the
// repository, and one smoke script (tests/package/smoke.js: init, every type's quantize and
// dequantize, the dots and matvec, writeGGUF -> parseGGUF -> openGGUF(Blob) -> dequantizeTensor)
// run in Node, Deno, Bun, workerd, headless Chromium (plain-ESM page, Vite build, esbuild build,
// each in a page and a module worker) and Firefox. Every runtime must pass the script's own checks
// and produce the same bytes as this process does from js/. A strict TypeScript consumer compiles
// against the installed types. Run once, not per build (make test-package).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as repoLib from '../js/index.js';
import { smoke } from './package/smoke.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const HERE = fileURLToPath(new URL('./package/', import.meta.url));
const bin = (/** @type {string} */ name) => join(REPO, 'node_modules', '.bin', name);
const TMP = mkdtempSync(join(tmpdir(), 'bq-package-'));
const APP = join(TMP, 'app');
/** @type {Record<string, string>} */
const expected = {};
/** @type {Record<string, string>} */
const versions = { node: process.version };
/**
 * Threads that init({ threads: 2 }) gets in each runtime (pages served cross-origin isolated). An
 * esbuild bundle does not emit the worker script that new URL('./worker.js', import.meta.url)
 * names: there the workers start from the embedded copy of that script (a blob: URL).
 * @type {Record<string, number>}
 */
const THREADS = {
  node: 2,
  deno: 2,
  bun: 2,
  'chromium-plain': 2,
  'chromium-vite': 2,
  'chromium-esbuild': 2,
  firefox: 2,
};

/** What `npm pack --json` printed on stdout, with its prepack step run (before()). */
let packStdout = '';

/**
 * Every result of a runtime: no failed check, and the digest this process gets from js/.
 * @param {any} results
 * @param {string} where
 */
function assertResults(results, where) {
  assert.ok(Array.isArray(results), `${where}: ${JSON.stringify(results)}`);
  for (const r of results) {
    assert.deepEqual(r.failures, [], `${where} (${r.backend})`);
    assert.equal(r.digest, expected[r.backend], `${where}: ${r.backend} results differ from js/ in Node`);
  }
}

/**
 * A smokeThreads result: no failures, on the thread count expected there (or whatever the runtime
 * gave, when expected is undefined).
 * @param {any} r
 * @param {string} where
 * @param {number} [threads]
 */
function assertThreads(r, where, threads) {
  assert.ok(r && Array.isArray(r.failures), `${where}: ${JSON.stringify(r)}`);
  assert.deepEqual(r.failures, [], where);
  if (threads !== undefined) assert.equal(r.threads, threads, `${where}: threads`);
}

before(async () => {
  expected.simd128 = (await smoke(repoLib, { init: { backend: 'simd128' } })).digest;
  expected.scalar = (await smoke(repoLib, { init: { backend: 'scalar' } })).digest;
  // Runtimes whose relaxed SIMD passes the probe (Chromium, Firefox, Deno, Bun) pick the relaxed
  // build, whose results are bit-identical to the simd128 build's (tests/relaxed.test.js checks that
  // kernel by kernel); Node 20 cannot run it, so its digest is the simd128 one.
  expected.relaxed = expected.simd128;
  // The tarball (prepack builds what is missing), installed with no registry access.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', TMP], { cwd: REPO, maxBuffer: 1 << 24 });
  packStdout = stdout;
  const tgz = join(TMP, /** @type {string} */ (stdout.match(/"filename": "([^"]+)"/)?.[1]));
  mkdirSync(APP);
  writeFileSync(join(APP, 'package.json'), JSON.stringify({ name: 'bq-smoke', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tgz], { cwd: APP });
  for (const f of readdirSync(HERE)) cpSync(join(HERE, f), join(APP, f));
});

after(() => rmSync(TMP, { recursive: true, force: true }));

test("npm pack --json prints only JSON: the prepack build's output goes to stderr", () => {
  /** @type {any} */
  let parsed;
  assert.doesNotThrow(() => (parsed = JSON.parse(packStdout)), `npm pack --json stdout:\n${packStdout.slice(0, 400)}`);
  assert.equal(parsed.length, 1);
  assert.match(parsed[0].filename, /^blockquant-[\d.]+\.tgz$/);
});

test('the tarball holds the builds, JS, declarations, README and LICENSE, and nothing else', async () => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO });
  const files = JSON.parse(stdout)[0].files.map((/** @type {any} */ f) => f.path);
  for (const f of [
    'LICENSE',
    'README.md',
    'package.json',
    'bin/blockquant',
    'js/index.js',
    'js/index-node.js',
    'js/index-workerd.js',
    'js/wasm/simd128.js',
    'wasm/blockquant-simd128.wasm',
    'wasm/blockquant-scalar.wasm',
    'wasm/blockquant-relaxed.wasm',
    'js/wasm/relaxed.js',
    'js/wasm/threads.js',
    'js/wasm/relaxed-threads.js',
    'js/wasm/worker-src.js',
    'js/worker.js',
    'js/model/imatrix.js',
    'js/cli/main.js',
    'js/cli/commands/quantize.js',
    'wasm/blockquant-threads.wasm',
    'wasm/blockquant-relaxed-threads.wasm',
    'types/index.d.ts',
    'types/node.d.ts',
    'types/wasm.d.ts',
  ]) {
    assert.ok(files.includes(f), `${f} is packed`);
  }
  const allowed =
    /^(LICENSE|README\.md|package\.json|bin\/blockquant|js\/((wasm|gen|model|gguf|cli|cli\/commands)\/)?[\w-]+\.js|wasm\/[\w-]+\.wasm|types\/((gen|model|gguf)\/)?[\w-]+\.d\.ts)$/;
  assert.deepEqual(
    files.filter((/** @type {string} */ f) => !allowed.test(f)),
    [],
  );
});

test('Node, Deno and Bun run the smoke script against the installed package', async (t) => {
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: '1', DENO_DIR: join(TMP, 'deno'), NO_COLOR: '1' };
  const runtimes = {
    node: [process.execPath, ['run.mjs']],
    deno: [bin('deno'), ['run', '--no-lock', '--allow-read', '--allow-env', 'run.mjs']],
    bun: [bin('bun'), ['run.mjs']],
  };
  versions.deno = (await run(bin('deno'), ['--version'])).stdout.split('\n')[0];
  versions.bun = (await run(bin('bun'), ['--version'])).stdout.trim();
  for (const [name, [cmd, args]] of Object.entries(runtimes)) {
    await t.test(name, async () => {
      const { stdout } = await run(/** @type {string} */ (cmd), /** @type {string[]} */ (args), { cwd: APP, env });
      const out = JSON.parse(stdout);
      assertResults(out.results, name);
      assert.ok(
        out.results.every((/** @type {any} */ r) => r.layout === 'whole'),
        `${name}: init()'s layout`,
      );
      assertThreads(out.threads, `${name} on threads`, THREADS[name]);
      assert.deepEqual(out.split.failures, [], `${name}: split layout`);
      t.diagnostic(`${name}: ${out.threads.threads} threads`);
    });
  }
  t.diagnostic(`node ${versions.node}, ${versions.deno}, bun ${versions.bun}`);
});

test('workerd: init() with no argument through the workerd condition; the default entry says what to pass', async (t) => {
  const esbuild = await import('esbuild');
  const dir = join(APP, 'workerd');
  mkdirSync(dir);
  // As wrangler does: .wasm imports stay imports of wasm modules listed in the config.
  /** @type {Set<string>} every .wasm the worker imports, for the config's module list */
  const wasmFiles = new Set();
  /** @type {import('esbuild').Plugin} */
  const wasmModules = {
    name: 'wasm-modules',
    setup(b) {
      b.onResolve({ filter: /\.wasm$/ }, (a) => {
        const file = join(a.resolveDir, a.path);
        cpSync(file, join(dir, file.split('/').pop() ?? ''));
        wasmFiles.add(file.split('/').pop() ?? '');
        return { path: file.split('/').pop(), external: true };
      });
      b.onResolve({ filter: /^\.\/default-entry\.js$/ }, () => ({ path: './default-entry.js', external: true }));
    },
  };
  const common = {
    bundle: true,
    format: /** @type {const} */ ('esm'),
    absWorkingDir: APP,
    logLevel: /** @type {const} */ ('error'),
  };
  await esbuild.build({
    ...common,
    entryPoints: ['worker-workerd.js'],
    outfile: join(dir, 'worker.js'),
    conditions: ['workerd', 'worker', 'browser'],
    plugins: [wasmModules],
  });
  await esbuild.build({ ...common, entryPoints: ['default-entry.js'], outfile: join(dir, 'default-entry.js') });
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "default-entry.js", esModule = embed "default-entry.js"),
${[...wasmFiles].map((f) => `    (name = "${f}", wasm = embed "${f}"),\n`).join('')}  ],
  compatibilityDate = "2025-01-01",
);
`,
  );
  versions.workerd = (await run(bin('workerd'), ['--version'])).stdout.trim();
  const child = spawn(bin('workerd'), ['serve', 'config.capnp', '--control-fd=3'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d));
  try {
    const port = await new Promise((resolve, reject) => {
      let buf = '';
      child.stdio[3]?.on('data', (/** @type {Buffer} */ d) => {
        buf += d;
        for (const line of buf.split('\n')) {
          const m = line.startsWith('{') ? JSON.parse(line) : null;
          if (m?.event === 'listen' && m.socket === 'http') resolve(m.port);
        }
      });
      child.on('exit', (code) => reject(new Error(`workerd exited with ${code}: ${stderr}`)));
    });
    const res = await fetch(`http://127.0.0.1:${port}/`);
    const body = await res.text();
    assert.equal(res.status, 200, body + stderr);
    const out = JSON.parse(body);
    assertResults(out.results, 'workerd');
    assert.ok(
      out.results.every((/** @type {any} */ r) => r.layout === 'whole'),
      "workerd: init()'s layout",
    );
    assert.deepEqual(out.split, { backend: 'simd128', failures: [] }, 'workerd: split layout');
    assert.match(out.plain, /does not allow compiling WebAssembly/);
    assert.match(
      out.plain,
      /import wasm from 'blockquant\/wasm\/blockquant-simd128\.wasm'; const bq = await init\(\{ module: wasm \}\)/,
    );
  } finally {
    child.kill();
  }
  t.diagnostic(`workerd ${versions.workerd}`);
});

/** Static files of the temp project, and result posts from the pages. */
function startServer() {
  /** @type {Map<string, (v: any) => void>} */
  const waiting = new Map();
  /** @type {Map<string, any>} */
  const results = new Map();
  /** @type {string[]} */
  const log = [];
  const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (req.method === 'POST' && path.startsWith('/result/')) {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const name = path.slice(8);
        results.set(name, { value: JSON.parse(body), requests: [...log] });
        waiting.get(name)?.(results.get(name));
        res.end('ok');
      });
      return;
    }
    log.push(path);
    try {
      if (path.includes('..')) throw new Error('no');
      const data = readFileSync(join(APP, path));
      res.writeHead(200, {
        'Content-Type': /** @type {any} */ (MIME)[extname(path)] ?? 'application/octet-stream',
        // cross-origin isolated: shared memory for init({ threads })
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cross-Origin-Embedder-Policy': 'require-corp',
      });
      res.end(data);
    } catch {
      res.writeHead(404).end();
    }
  });
  return {
    server,
    log,
    /** @param {string} name */
    result: (name) =>
      results.get(name) ??
      new Promise((resolve, reject) => {
        waiting.set(name, resolve);
        // A page that never reports fails the test instead of hanging it.
        setTimeout(() => reject(new Error(`no result from ${name}; requests: ${log.join(' ')}`)), 120_000).unref();
      }),
  };
}

/** Writes web/<name>/ from the page files; plain ESM pages name the module by path. */
function page(/** @type {string} */ name, /** @type {string} */ spec) {
  const dir = join(APP, 'web', name);
  mkdirSync(dir, { recursive: true });
  for (const f of ['main.js', 'worker.js', 'smoke.js']) {
    writeFileSync(join(dir, f), readFileSync(join(HERE, f), 'utf8').replaceAll("from 'blockquant'", `from '${spec}'`));
  }
  writeFileSync(join(dir, 'index.html'), readFileSync(join(HERE, 'index.html')));
  return dir;
}

test('browsers: plain ESM, Vite and esbuild builds, each in a page and a module worker', async (t) => {
  const { chromium } = await import('playwright-core');
  const vite = await import('vite');
  const esbuild = await import('esbuild');
  page('plain', '/node_modules/blockquant/js/index.js');
  const src = page('src', 'blockquant');
  await vite.build({
    root: src,
    base: '/web/vite/',
    configFile: false,
    logLevel: 'silent',
    build: { outDir: join(APP, 'web', 'vite'), emptyOutDir: true },
    worker: { format: 'es' },
  });
  await esbuild.build({
    entryPoints: [join(src, 'main.js'), join(src, 'worker.js')],
    bundle: true,
    format: 'esm',
    outdir: join(APP, 'web', 'esbuild'),
    logLevel: 'error',
  });
  cpSync(join(src, 'index.html'), join(APP, 'web', 'esbuild', 'index.html'));
  versions.vite = vite.version;
  versions.esbuild = esbuild.version;

  const srv = startServer();
  await new Promise((r) => srv.server.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (srv.server.address());
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  versions.chromium = browser.version();
  try {
    for (const build of ['plain', 'vite', 'esbuild']) {
      await t.test(`Chromium, ${build}`, async () => {
        srv.log.length = 0;
        const p = await browser.newPage();
        /** @type {string[]} */
        const errors = [];
        p.on('pageerror', (e) => errors.push(e.message));
        await p.goto(`http://127.0.0.1:${port}/web/${build}/index.html?name=chromium-${build}`);
        const pg = await srv.result(`chromium-${build}-page`);
        const wk = await srv.result(`chromium-${build}-worker`);
        const pt = await srv.result(`chromium-${build}-page-threads`);
        const wt = await srv.result(`chromium-${build}-worker-threads`);
        const ps = await srv.result(`chromium-${build}-page-split`);
        await p.close();
        assert.deepEqual(errors, []);
        assertResults(pg.value, `Chromium ${build} page`);
        // The split layout's modules are found where a bundler emits them (plain ESM, Vite); esbuild
        // does not emit new URL(..., import.meta.url) assets, and the split layout has no embedded copy.
        if (build === 'esbuild') assert.match(ps.value.error ?? '', /cannot fetch|HTTP 404/, JSON.stringify(ps.value));
        else assert.deepEqual(ps.value, { backend: 'relaxed', failures: [] }, `Chromium ${build} split layout`);
        assertResults(wk.value, `Chromium ${build} worker`);
        assertThreads(pt.value, `Chromium ${build} page on threads`, THREADS[`chromium-${build}`]);
        assertThreads(wt.value, `Chromium ${build} worker on threads`, THREADS[`chromium-${build}`]);
        t.diagnostic(`Chromium ${build}: page ${pt.value.threads} threads, worker ${wt.value.threads}`);
        const wasm = pg.requests.filter((/** @type {string} */ r) => r.endsWith('.wasm'));
        // init() is the split layout where the bundle emits its modules, else the whole build.
        assert.equal(pg.value[0].layout, build === 'esbuild' ? 'whole' : 'split', `Chromium ${build}: init()'s layout`);
        if (build !== 'esbuild') {
          // Only the selected build's modules are downloaded (relaxed: Chromium passes the
          // relaxed-SIMD probe), the core first, as .wasm files, and no embedded copy; the smoke
          // script enabled every side module.
          assert.equal(wasm.length, 5, `page requests: ${pg.requests.join(' ')}`);
          assert.match(wasm[0], /relaxed-core.*\.wasm$/);
          for (const m of ['quant', 'dot', 'grid', 'imat'])
            assert.ok(
              wasm.some((/** @type {string} */ r) => new RegExp(`relaxed-${m}.*\\.wasm$`).test(r)),
              `${m}: ${wasm.join(' ')}`,
            );
          assert.ok(
            !pg.requests.some((/** @type {string} */ r) =>
              /wasm\/(relaxed|simd128)\.js|(relaxed|simd128)-.*\.js/.test(r),
            ),
            pg.requests.join(' '),
          );
        }
      });
    }
  } finally {
    await browser.close();
  }

  await t.test('Firefox (firefox-esr, headless), plain ESM', async () => {
    versions.firefox = (await run('firefox-esr', ['--version'])).stdout.trim();
    const profile = join(TMP, 'firefox');
    mkdirSync(profile);
    const ff = spawn(
      'firefox-esr',
      ['--headless', '--no-remote', '--profile', profile, `http://127.0.0.1:${port}/web/plain/index.html?name=firefox`],
      { stdio: 'ignore', env: { ...process.env, MOZ_DISABLE_AUTO_SAFE_MODE: '1' } },
    );
    try {
      const pg = await srv.result('firefox-page');
      const wk = await srv.result('firefox-worker');
      assertResults(pg.value, 'Firefox page');
      assert.equal(pg.value[0].layout, 'split', "Firefox: init()'s layout");
      assertResults(wk.value, 'Firefox worker');
      const ps = await srv.result('firefox-page-split');
      assert.deepEqual(ps.value.failures, [], `Firefox split layout: ${JSON.stringify(ps.value)}`);
      const pt = await srv.result('firefox-page-threads');
      const wt = await srv.result('firefox-worker-threads');
      assertThreads(pt.value, 'Firefox page on threads', THREADS.firefox);
      assertThreads(wt.value, 'Firefox worker on threads', THREADS.firefox);
      t.diagnostic(`Firefox: page ${pt.value.threads} threads, worker ${wt.value.threads}`);
    } finally {
      ff.kill();
    }
  });
  srv.server.close();
  t.diagnostic(
    `chromium ${versions.chromium}, ${versions.firefox}, vite ${versions.vite}, esbuild ${versions.esbuild}`,
  );
});

test('a strict TypeScript consumer compiles against the installed package (bundler and nodenext)', async (t) => {
  for (const resolution of ['bundler', 'nodenext']) {
    const dir = join(APP, `ts-${resolution}`);
    mkdirSync(dir);
    cpSync(join(HERE, 'consumer.ts'), join(dir, 'consumer.ts'));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          lib: ['es2022', 'dom'],
          module: resolution === 'bundler' ? 'es2022' : 'nodenext',
          moduleResolution: resolution,
          types: [],
          skipLibCheck: false,
        },
        files: ['consumer.ts'],
      }),
    );
    await t.test(resolution, async () => {
      const r = await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', dir]).catch((e) => e);
      assert.equal(r.code ?? 0, 0, `${r.stdout}${r.stderr}`);
    });
  }
  versions.typescript = (
    await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '--version'])
  ).stdout.trim();
  t.diagnostic(versions.typescript);
});

after(() => console.log(`package test runtimes: ${JSON.stringify(versions)}`));
