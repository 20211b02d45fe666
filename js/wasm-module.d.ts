// A .wasm file imported as a module (workerd, and bundlers for it) is a compiled WebAssembly.Module.
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
