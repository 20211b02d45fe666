// tests/relaxed/page.js outside a browser (Deno, Bun: both pass the relaxed probe, so 'auto' loads
// the relaxed build there): prints the page's result as JSON. The first argument is the seed.
globalThis.window = globalThis;
globalThis.location = /** @type {any} */ (new URL(`http://127.0.0.1/?seed=${Number(process.argv[2] ?? 1)}`));
await import('./page.js');
while (/** @type {any} */ (globalThis).result === undefined) await new Promise((r) => setTimeout(r, 50));
console.log(JSON.stringify(/** @type {any} */ (globalThis).result));
