// Shapes of the JSON the WebAssembly module returns (web/wasm/src/lib.rs).
export {};
