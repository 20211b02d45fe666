// make bench: the gzipped bytes a browser downloads for two Vite-built apps that use the package
// (resolved through its exports map, as from node_modules): one that calls init() + dequantize on
// the SIMD128 build, one that only parses GGUF. Lists every emitted asset, marking what the page
// loads: the entry chunk and its static imports, and the .wasm of the selected build; dynamic
// chunks (the embedded fallback builds) and the other build are emitted but not downloaded.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const APPS = {
  'init() + dequantize (simd128)': `import { init } from 'blockquant';
const bq = await init({ backend: 'simd128' });
document.body.textContent = String(bq.dequantize('q4_0', new Uint8Array(18))[0]);`,
  'parseGGUF only': `import { parseGGUF } from 'blockquant';
const r = await fetch('model.gguf');
document.body.textContent = String(parseGGUF(new Uint8Array(await r.arrayBuffer())).tensors.length);`,
};

const tmp = mkdtempSync(join(tmpdir(), 'bq-size-'));
try {
  mkdirSync(join(tmp, 'node_modules'));
  symlinkSync(REPO, join(tmp, 'node_modules', 'blockquant'));
  const gz = (/** @type {string} */ f) => gzipSync(readFileSync(f), { level: 9 }).length;
  for (const [name, code] of Object.entries(APPS)) {
    const root = join(tmp, name.replace(/\W+/g, '-'));
    mkdirSync(root);
    writeFileSync(join(root, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>\n');
    writeFileSync(join(root, 'main.js'), code);
    const out = join(root, 'dist');
    await build({ root, configFile: false, logLevel: 'silent', build: { outDir: out, manifest: true } });
    /** @type {Record<string, { file: string, imports?: string[], dynamicImports?: string[], isEntry?: boolean }>} */
    const manifest = JSON.parse(readFileSync(join(out, '.vite', 'manifest.json'), 'utf8'));
    const loaded = new Set();
    const visit = (/** @type {string} */ key) => {
      const c = manifest[key];
      if (!c || loaded.has(c.file)) return;
      loaded.add(c.file);
      for (const i of c.imports ?? []) visit(i);
    };
    for (const [key, c] of Object.entries(manifest)) if (c.isEntry) visit(key);
    const files = [...new Set(Object.values(manifest).map((c) => c.file))];
    // The selected build's .wasm is fetched by the loader; the other is not.
    const wasm = files.filter((f) => f.endsWith('.wasm'));
    if (code.includes('init(')) for (const f of wasm.filter((f) => f.includes('simd128'))) loaded.add(f);
    let js = 0,
      wasmBytes = 0;
    console.log(`\nVite app, ${name}: gzipped bytes (* = downloaded by the page)`);
    for (const f of files.sort()) {
      const n = gz(join(out, f));
      const mark = loaded.has(f) ? '*' : ' ';
      console.log(`  ${mark} ${f.padEnd(44)} ${String(n).padStart(7)}`);
      if (!loaded.has(f)) continue;
      if (f.endsWith('.wasm')) wasmBytes += n;
      else js += n;
    }
    const kb = (/** @type {number} */ n) => (n / 1024).toFixed(1);
    console.log(`  downloaded: JS ${kb(js)} KB + wasm ${kb(wasmBytes)} KB = ${kb(js + wasmBytes)} KB`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
