// blockquant/wasm/*.wasm: a raw build. Imported as a module (workerd, Vercel, bundlers configured
// for wasm modules) it is a compiled WebAssembly.Module, to pass as init({ module }).
declare const module: WebAssembly.Module;
export default module;
