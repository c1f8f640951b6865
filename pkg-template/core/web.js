// dsh-allow's decision core for the browser: the wasm-bindgen `web` output.
// Call `await init()` once (it fetches dsh_allow_bg.wasm next to this file,
// or takes a URL, a Response, bytes or a compiled WebAssembly.Module), then
// use the same functions as 'dsh-allow/core'. There is no file system here:
// `decide` takes paths as spelled unless a host is passed.
import initWasm from './wasm/web/dsh_allow.js';
import * as wasm from './wasm/web/dsh_allow.js';

// Every core export flows through (decide is wrapped below for the init check).
export * from './wasm/web/dsh_allow.js';

let ready = null;
let loaded = false;

/** Load the core once; later calls return the same promise. */
export function init(wasmUrlOrBytes) {
  ready ??= initWasm(
    wasmUrlOrBytes === undefined ? undefined : { module_or_path: wasmUrlOrBytes },
  ).then((exports) => {
    loaded = true;
    return exports;
  });
  return ready;
}

/** Synchronous load from bytes or a WebAssembly.Module (e.g. in a worker). */
export function initSync(module) {
  const exports = wasm.initSync({ module });
  loaded = true;
  return exports;
}

/** Decide one shell call; `host` ({canonical, kind, which}) is optional. */
export function decide(request, host) {
  if (!loaded) throw new Error('dsh-allow/core/web: call `await init()` before decide()');
  return wasm.decide(request, host);
}
