// Shapes of the JSON the WebAssembly module returns (web/wasm/src/lib.rs).

/** The public state of a game. `board`: 49 trace characters, row 0 first. */
export interface StateView {
  board: string;
  next: number | null;
  score: number;
  level: number;
  movesRemaining: number;
  moves: number;
  gameOver: boolean;
}

/** One picture during a move: `drop`, `pop`, `fall` or `rise`. */
export interface Frame {
  kind: "drop" | "pop" | "fall" | "rise";
  board: string;
  depth: number;
  popped: number[];
  changed: number[];
}

/** One move with its frames and the state after it. */
export interface Step {
  column: number;
  disc: number;
  frames: Frame[];
  scoreDelta: number;
  levelAdvanced: boolean;
  clearedBoard: boolean;
  terminal: string | null;
  maxDepth: number;
  state: StateView;
}

/** A dropped file ready to replay. */
export interface Replay {
  kind: "tape" | "trace";
  title: string;
  seed: number | null;
  start: StateView;
  steps: Step[];
  failure: string | null;
  note: string;
}

/** `drop7 decide`'s output object; `values` are 16-hex-digit f64 bit patterns. */
export interface DecideRecord {
  action: number | null;
  completedDepth: number;
  values: (string | null)[];
  valuesDecimal: (number | null)[];
  work: number;
  nodes: number;
  ms: number;
}

/** Messages to the search worker. */
export interface AdviceRequest {
  id: number;
  board: string;
  next: number;
  rise: number;
  depth: number;
  strata: number;
}

/** Messages from the search worker. */
export type AdviceReply =
  | { id: number; ok: true; record: DecideRecord; ms: number }
  | { id: number; ok: false; error: string };
