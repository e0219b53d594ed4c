/* tslint:disable */
/* eslint-disable */
export const memory: WebAssembly.Memory;
export const __wbg_webgame_free: (a: number, b: number) => void;
export const decide: (a: number, b: number, c: number, d: number, e: number, f: number) => [number, number, number, number];
export const decideGolden: (a: number, b: number) => [number, number, number, number];
export const isRoundFile: (a: number, b: number) => number;
export const parseSeed: (a: number, b: number) => [number, number, number];
export const replayFile: (a: number, b: number) => [number, number, number, number];
export const traceLines: (a: number, b: number, c: number, d: number) => [number, number];
export const webgame_columns: (a: number) => [number, number];
export const webgame_fromRound: (a: number, b: number) => [number, number, number];
export const webgame_legalMask: (a: number) => number;
export const webgame_moveCap: (a: number) => number;
export const webgame_new: (a: number) => number;
export const webgame_play: (a: number, b: number) => [number, number, number, number];
export const webgame_restarted: (a: number) => number;
export const webgame_roundId: (a: number) => [number, number];
export const webgame_seed: (a: number) => number;
export const webgame_state: (a: number) => [number, number];
export const webgame_undo: (a: number) => number;
export const webgame_withMoves: (a: number, b: number, c: number) => [number, number, number];
export const __wbindgen_export_0: WebAssembly.Table;
export const __wbindgen_malloc: (a: number, b: number) => number;
export const __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
export const __externref_table_dealloc: (a: number) => void;
export const __wbindgen_free: (a: number, b: number, c: number) => void;
export const __wbindgen_start: () => void;
