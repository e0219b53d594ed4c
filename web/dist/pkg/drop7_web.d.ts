/* tslint:disable */
/* eslint-disable */
/**
 * Runs one golden search record (a `search.jsonl` line) with its own
 * config and the strict-LRU table at its capacity (0 = none), as the native
 * parity gate does; returns the decision as [`decide`] formats it, plus
 * `expectedScores`.
 *
 * # Errors
 * A record without the root or config fields.
 */
export function decideGolden(record: string): string;
/**
 * The fair search's decision on a position, as `drop7 decide` prints it:
 * JSON `{action, completedDepth, values (16-hex-digit bit patterns or null),
 * valuesDecimal, work, nodes, cacheHits, cacheEntries, evictions, leafCalls,
 * moveCalls, ms}` (`ms` is 0: the caller times it). Table: the CLI's default
 * ([`TableSpec::default_for_depth`]: set-associative, 4 ways, 65,536 entries
 * up to depth 4 and 2^20 from depth 5), so the counters are `drop7 decide`'s
 * too. Spec: search.md.
 *
 * # Errors
 * A malformed board, `next` outside 1..=7, `rise` outside 1..=5, depth
 * outside 1..=8 or strata outside 1..=32, or a table the browser cannot allocate.
 */
export function decide(board: string, next: number, rise: number, depth: number, strata: number): string;
/**
 * `drop7 trace`'s lines (trace-format.md block 1, one JSON object a line,
 * `\n`-terminated) for the game of `seed` on the headless (or, if `stream`,
 * stream) driver playing `columns` in order; stops at the first illegal
 * column or at game over.
 */
export function traceLines(seed: number, stream: boolean, columns: Uint8Array): string;
/**
 * Whether `text` is a scripted round file (a JSON object whose `format` is
 * `drop7-scripted-round-v1`), to be played rather than replayed.
 */
export function isRoundFile(text: string): boolean;
/**
 * Validates a dropped file and turns it into replay steps: JSON
 * `{kind: "tape"|"trace", title, seed, start: state, steps: [step],
 * failure, note}` (see [`replay::Replay`]).
 *
 * # Errors
 * A message naming what is wrong and where (line, field, move).
 */
export function replayFile(text: string): string;
/**
 * Parses a seed in decimal or `0x` hex (a u32).
 *
 * # Errors
 * A message naming the text.
 */
export function parseSeed(text: string): number;
/**
 * A live game of Drop7 Hardcore: a seeded game (headless or stream driver)
 * or a scripted round (latent board mode).
 */
export class WebGame {
  free(): void;
  /**
   * Legal columns as a 7-bit mask (bit c = column c); 0 once the game is
   * over or a round's move cap is reached.
   */
  legalMask(): number;
  /**
   * A game of a `drop7-scripted-round-v1` round file (formats.md; latent
   * board mode: the round fixes every disc and every hidden gray value,
   * and its `maximumMoves` caps the game).
   *
   * # Errors
   * Not a round file, or what is wrong with it (field and index).
   */
  static fromRound(text: string): WebGame;
  /**
   * A headless game of `seed` with `columns` (0..=6 each) already played.
   *
   * # Errors
   * Names the first move that cannot be played.
   */
  static withMoves(seed: number, columns: Uint8Array): WebGame;
  /**
   * A new headless-driver game of `seed` (rules.md §6).
   */
  constructor(seed: number);
  /**
   * Plays `column` (0..=6): the step as JSON `{column, disc, frames,
   * scoreDelta, levelAdvanced, clearedBoard, terminal, maxDepth, state}`.
   *
   * # Errors
   * A full column, an out-of-range column, a finished game or a round's
   * move cap; nothing changes.
   */
  play(column: number): string;
  /**
   * The game seed (a round's `generatorSeedHex`).
   */
  seed(): number;
  /**
   * Takes back the last move (replays the game without it); false if none.
   */
  undo(): boolean;
  /**
   * The state as JSON `{board, next, score, level, movesRemaining, moves, gameOver}`.
   */
  state(): string;
  /**
   * The columns played so far.
   */
  columns(): Uint8Array;
  /**
   * The round's move cap (`maximumMoves`), or `undefined` for a seeded game.
   */
  moveCap(): number | undefined;
  /**
   * The round's id (`gauntlet-01`, …), or `undefined` for a seeded game.
   */
  roundId(): string | undefined;
  /**
   * A new game with the same luck (seed and driver, or round), no move played.
   */
  restarted(): WebGame;
}

export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;

export interface InitOutput {
  readonly memory: WebAssembly.Memory;
  readonly __wbg_webgame_free: (a: number, b: number) => void;
  readonly decide: (a: number, b: number, c: number, d: number, e: number, f: number) => [number, number, number, number];
  readonly decideGolden: (a: number, b: number) => [number, number, number, number];
  readonly isRoundFile: (a: number, b: number) => number;
  readonly parseSeed: (a: number, b: number) => [number, number, number];
  readonly replayFile: (a: number, b: number) => [number, number, number, number];
  readonly traceLines: (a: number, b: number, c: number, d: number) => [number, number];
  readonly webgame_columns: (a: number) => [number, number];
  readonly webgame_fromRound: (a: number, b: number) => [number, number, number];
  readonly webgame_legalMask: (a: number) => number;
  readonly webgame_moveCap: (a: number) => number;
  readonly webgame_new: (a: number) => number;
  readonly webgame_play: (a: number, b: number) => [number, number, number, number];
  readonly webgame_restarted: (a: number) => number;
  readonly webgame_roundId: (a: number) => [number, number];
  readonly webgame_seed: (a: number) => number;
  readonly webgame_state: (a: number) => [number, number];
  readonly webgame_undo: (a: number) => number;
  readonly webgame_withMoves: (a: number, b: number, c: number) => [number, number, number];
  readonly __wbindgen_export_0: WebAssembly.Table;
  readonly __wbindgen_malloc: (a: number, b: number) => number;
  readonly __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
  readonly __externref_table_dealloc: (a: number) => void;
  readonly __wbindgen_free: (a: number, b: number, c: number) => void;
  readonly __wbindgen_start: () => void;
}

export type SyncInitInput = BufferSource | WebAssembly.Module;
/**
* Instantiates the given `module`, which can either be bytes or
* a precompiled `WebAssembly.Module`.
*
* @param {{ module: SyncInitInput }} module - Passing `SyncInitInput` directly is deprecated.
*
* @returns {InitOutput}
*/
export function initSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;

/**
* If `module_or_path` is {RequestInfo} or {URL}, makes a request and
* for everything else, calls `WebAssembly.instantiate` directly.
*
* @param {{ module_or_path: InitInput | Promise<InitInput> }} module_or_path - Passing `InitInput` directly is deprecated.
*
* @returns {Promise<InitOutput>}
*/
export default function __wbg_init (module_or_path?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>): Promise<InitOutput>;
