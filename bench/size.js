// make bench: the gzipped bytes (level 9) a browser downloads for three Vite-built apps that use the
// package (resolved through its exports map, as from node_modules): one that calls init() (the
// split layout) + dequantize, one that calls init({ layout: 'whole' }) + dequantize, one that only
// parses GGUF. Lists every emitted asset, marking what the page loads: the entry chunk and its
// static imports, and the .wasm of the selected build or its core (relaxed in Chromium, which
// passes the relaxed-SIMD probe; SIMD128 where relaxed SIMD is refused); dynamic chunks (the
// embedded fallback builds) and the other builds are emitted but not downloaded.
//
// The numbers are deterministic for a build, so the README's size sentence is the one
// sizeSentence() writes from them: tests/size.test.js fails when they disagree, and
// `node bench/size.js --readme` rewrites it.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const README = join(REPO, 'README.md');
const APPS = {
  codec: `import { init } from 'blockquant';
const bq = await init({ layout: 'whole' });
document.body.textContent = String(bq.dequantize('q4_0', new Uint8Array(18))[0]);`,
  split: `import { init } from 'blockquant';
const bq = await init();
document.body.textContent = String(bq.dequantize('q4_0', new Uint8Array(18))[0]);`,
  parse: `import { parseGGUF } from 'blockquant';
const r = await fetch('model.gguf');
document.body.textContent = String(parseGGUF(new Uint8Array(await r.arrayBuffer())).tensors.length);`,
};
const BUILDS = /** @type {const} */ (['relaxed', 'simd128', 'scalar', 'threads']);
// The split layout's modules (src/modules.inc): a page of the split app loads the core of its
// build, and the side modules only when a call needs them.
const MODULES = ['core', 'quant', 'dot', 'grid', 'imat'];

/**
 * @typedef {object} AppSize
 * @property {number} js gzipped bytes of the JS the page loads (entry chunk and static imports)
 * @property {Record<string, number>} wasm gzipped bytes of each build's emitted .wasm (the split app:
 *   of each build's core)
 * @property {Record<string, number>} modules the split app: gzipped bytes of each <build>-<module>.wasm
 * @property {{ file: string, gzip: number, loaded: boolean }[]} files every emitted asset
 */

/**
 * Builds both apps with Vite against this checkout (as installed from node_modules) and measures
 * what they emit. Deterministic for a build of the package.
 * @returns {Promise<{ codec: AppSize, split: AppSize, parse: AppSize }>}
 */
export async function measure() {
  const { build } = await import('vite');
  const tmp = mkdtempSync(join(tmpdir(), 'bq-size-'));
  try {
    mkdirSync(join(tmp, 'node_modules'));
    symlinkSync(REPO, join(tmp, 'node_modules', 'blockquant'));
    const gz = (/** @type {string} */ f) => gzipSync(readFileSync(f), { level: 9 }).length;
    /** @type {Record<string, AppSize>} */
    const out = {};
    for (const [name, code] of Object.entries(APPS)) {
      const root = join(tmp, name);
      mkdirSync(root);
      writeFileSync(join(root, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>\n');
      writeFileSync(join(root, 'main.js'), code);
      const dist = join(root, 'dist');
      await build({ root, configFile: false, logLevel: 'silent', build: { outDir: dist, manifest: true } });
      /** @type {Record<string, { file: string, src?: string, imports?: string[], dynamicImports?: string[], isEntry?: boolean }>} */
      const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8'));
      const loaded = new Set();
      const visit = (/** @type {string} */ key) => {
        const c = manifest[key];
        if (!c || loaded.has(c.file)) return;
        loaded.add(c.file);
        for (const i of c.imports ?? []) visit(i);
      };
      for (const [key, c] of Object.entries(manifest)) if (c.isEntry) visit(key);
      // The split layout's URL table is a dynamic import that the split layout's init() always makes.
      if (name === 'split')
        for (const key of Object.keys(manifest)) if (key.endsWith('js/bundled-split.js')) visit(key);
      /** @type {Map<string, string>} emitted file -> its source path */
      const srcOf = new Map(Object.entries(manifest).map(([key, c]) => [c.file, c.src ?? key]));
      const files = [...srcOf.keys()].sort();
      const app = {
        js: 0,
        wasm: /** @type {Record<string, number>} */ ({}),
        modules: /** @type {Record<string, number>} */ ({}),
        files: /** @type {any[]} */ ([]),
      };
      for (const f of files) {
        const n = gz(join(dist, f));
        const src = /** @type {string} */ (srcOf.get(f));
        const m = /blockquant-(relaxed|simd128|scalar|threads)(?:-([a-z]+))?\.wasm$/.exec(src);
        if (m && !m[2] && name !== 'split') app.wasm[m[1]] = n;
        if (m && m[2] && MODULES.includes(m[2])) {
          app.modules[`${m[1]}-${m[2]}`] = n;
          if (m[2] === 'core' && name === 'split') app.wasm[m[1]] = n;
        }
        if (loaded.has(f)) app.js += n;
        app.files.push({ file: f, gzip: n, loaded: loaded.has(f) });
      }
      out[name] = app;
    }
    return /** @type {{ codec: AppSize, split: AppSize, parse: AppSize }} */ (out);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const kb = (/** @type {number} */ n) => (n / 1024).toFixed(1);

/**
 * The README's size sentence for the measured sizes, wrapped at 100 columns.
 * @param {{ codec: AppSize, split: AppSize, parse: AppSize }} m
 * @returns {string}
 */
export function sizeSentence(m) {
  const { js, wasm } = m.codec;
  const s = m.split;
  const side = (/** @type {string} */ mod) => kb(s.modules[`relaxed-${mod}`]);
  const text =
    `A Vite app that calls \`init()\` and \`dequantize\` downloads ${kb(s.js + s.wasm.relaxed)} KB gzipped in ` +
    `Chromium (${kb(s.js)} KB of JS and the relaxed build's core, ${kb(s.wasm.relaxed)} KB: the split layout), ` +
    `${kb(s.js + s.wasm.simd128)} KB where the SIMD128 build is selected and ${kb(s.js + s.wasm.scalar)} KB with ` +
    `the scalar one, and the side modules on first use: quant ${side('quant')} KB, dot ${side('dot')} KB, ` +
    `grid ${side('grid')} KB, imat ${side('imat')} KB (relaxed). With \`init({ layout: 'whole' })\` it ` +
    `downloads ${kb(js + wasm.relaxed)} KB (${kb(js)} KB of JS and ${kb(wasm.relaxed)} KB of wasm: the whole ` +
    `relaxed build), ${kb(js + wasm.simd128)} KB with SIMD128 and ${kb(js + wasm.scalar)} KB with scalar. One that only ` +
    `parses GGUF, ${kb(m.parse.js)} KB (gzip level 9; \`node bench/size.js\` measures them, ` +
    `\`tests/size.test.js\` checks this sentence against the build).`;
  const lines = [];
  let line = '';
  // A number stays on the line of its unit.
  for (const word of text.replaceAll(' KB', '\u00a0KB').split(' ')) {
    if (line && line.length + 1 + word.length > 100) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n').replaceAll('\u00a0', ' ');
}

/** The README's size sentence as it stands: from "A Vite app that calls" to the paragraph's end. */
export const SENTENCE = /A Vite app that calls `init\(\)`[^]*?(?=\n\n)/;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const m = await measure();
  for (const [name, app] of Object.entries(m)) {
    const what = {
      codec: "init({ layout: 'whole' }) + dequantize",
      split: 'init() + dequantize (the split layout)',
      parse: 'parseGGUF only',
    };
    console.log(`\nVite app, ${what[/** @type {keyof typeof what} */ (name)]}: gzipped bytes`);
    console.log('(* = downloaded by every page; the wasm of the selected build is added)');
    for (const f of app.files) {
      console.log(`  ${f.loaded ? '*' : ' '} ${f.file.padEnd(44)} ${String(f.gzip).padStart(7)}`);
    }
    console.log(`  JS ${kb(app.js)} KB`);
    for (const [b, n] of Object.entries(app.wasm))
      if (name !== 'parse') console.log(`  + ${b} ${name === 'split' ? 'core' : 'wasm'}: ${kb(app.js + n)} KB`);
  }
  const sentence = sizeSentence(m);
  console.log(`\n${sentence}`);
  if (process.argv.includes('--readme')) {
    const readme = readFileSync(README, 'utf8');
    if (!SENTENCE.test(readme)) throw new Error('README.md has no size sentence ("A Vite app that calls `init()`...")');
    writeFileSync(README, readme.replace(SENTENCE, sentence));
    console.log('README.md: size sentence updated');
  }
}
