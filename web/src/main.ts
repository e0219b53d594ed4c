// The drop7 page: play (seeded games, or scripted rounds dropped on the page),
// advice from the fair player (in a worker), replay of dropped tapes and
// traces, shareable URLs. Everything the engine does runs in
// the WebAssembly module built from web/wasm (the exact core engine).
import init, { WebGame, isRoundFile, parseSeed, replayFile } from "./pkg/drop7_web.js";
import { Advisor } from "./advisor.js";
import { buildBoard, clearBars, showBars, showBoard, showFrame, showStatus } from "./board.js";
import type { Replay, StateView, Step } from "./types.js";

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const hex = (s: number) => "0x" + (s >>> 0).toString(16).padStart(8, "0");
const MAX_FILE_BYTES = 32 << 20;

let game: WebGame;
let view: StateView;
const queue: number[] = [];
let busy = false;
let autoplay = false;
const advisor = new Advisor();
let replay: { r: Replay; pos: number; running: boolean } | null = null;
/** Bumped whenever what the board shows is replaced (new game, undo, replay): stale animations stop. */
let epoch = 0;
const STALE = new Error("stale animation");

/** `text` cut to `max` characters, saying how many were left out: a value echoed in a message
 * (a 10,000-digit seed, a 100,000-character round id, a file name), not the sentence around it. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/**
 * An error's message for a sentence: each `echoed` input (a seed typed or in the URL) cut where
 * the message repeats it, the reason after it kept; then the whole cut as `clip` does.
 */
function errText(e: unknown, ...echoed: string[]): string {
  let text = (e as Error).message;
  for (const v of echoed) if (v.length > 40) text = text.split(v).join(clip(v, 40));
  return clip(text, 400);
}

function message(text: string, info = false): void {
  const m = $("message");
  // A last guard: no message fills the page (the long values are cut where they are put in).
  m.textContent = clip(text, 1000);
  m.className = info ? "info" : "";
}

function speed(): number {
  return Number($<HTMLSelectElement>("speed").value);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function setBusy(b: boolean): void {
  busy = b;
  $("board").dataset.busy = String(b);
}

function show(s: StateView): void {
  view = s;
  showBoard(s.board);
  showStatus(s, s.moves);
  $("chain").textContent = "";
}

async function animate(step: Step, before: string): Promise<void> {
  const ms = speed();
  const ep = epoch;
  if (ms > 0 && step.frames.length > 0) {
    const wait = async () => {
      await sleep(ms);
      if (ep !== epoch) throw STALE;
    };
    let prev = before;
    try {
      for (const f of step.frames) {
        await showFrame(prev, f, wait);
        prev = f.board;
      }
    } catch (e) {
      if (e === STALE) return;
      throw e;
    }
  }
  if (ep !== epoch) return;
  show(step.state);
  if (step.clearedBoard) $("chain").textContent = "Board cleared! +70,000";
}

const SEED_HINT = "decimal or 0x hex";

/**
 * The Seed status and the Seed box: what is on the board. The live game's seed,
 * or a replayed trace's; a round or a tape has none: the box is then empty and
 * its placeholder and title say so (New game then starts a random seed).
 */
function showSeed(): void {
  let seed: number | null;
  let what: "tape" | "round" = "tape";
  let status = "tape";
  if (replay) {
    seed = replay.r.seed;
  } else {
    const round = game.roundId();
    seed = round === undefined ? game.seed() : null;
    what = "round";
    status = `round ${clip(round ?? "", 60)}`;
  }
  const input = $<HTMLInputElement>("seed-input");
  $("seed-text").textContent = seed === null ? status : hex(seed);
  input.value = seed === null ? "" : hex(seed);
  input.placeholder = seed === null ? `none (${what})` : SEED_HINT;
  input.title = seed === null
    ? `The ${what} on the board has no seed: type one for New game, or leave it empty for a random seed.`
    : "";
}

/** Makes `g` the live game (a new seed, a restart or a round) and shows it. */
function begin(g: WebGame, note = "", info = false): void {
  epoch++;
  stopAll();
  leaveReplay();
  game = g;
  showSeed();
  show(JSON.parse(game.state()));
  clearBars();
  // No advice asked in this game yet: the bars take no room (no gap under the board).
  $("bars").hidden = true;
  $("advice-info").textContent = "";
  $<HTMLInputElement>("share-url").value = "";
  message(note, info);
}

function startGame(seed: number, moves: number[] = []): void {
  const g = new WebGame(seed);
  let bad = "";
  for (let k = 0; k < moves.length; k++) {
    try {
      g.play(moves[k]);
    } catch (e) {
      bad = `Shared URL: move ${k + 1} (digit ${moves[k]}: column ${moves[k] + 1}) cannot be played: ${(e as Error).message}; showing the first ${k} moves.`;
      break;
    }
  }
  begin(g, bad);
}

/** Plays a dropped scripted round (latent board mode: its discs and hidden gray values). */
function startRound(text: string, name: string): void {
  let g: WebGame;
  try {
    g = WebGame.fromRound(text);
  } catch (e) {
    message(`Cannot play “${clip(name, 100)}”: ${errText(e)}`);
    return;
  }
  begin(g, `Playing round ${clip(g.roundId() ?? "", 60)} from “${clip(name, 100)}”: its discs and hidden gray values are fixed; ` +
    `at most ${g.moveCap()} moves. Restart and Undo keep the round.`, true);
}

/** The end-of-game message (a round's move cap, or the game's own end). */
function overText(s: StateView, terminal: string | null): string {
  const cap = game.moveCap();
  if (cap !== undefined && s.moves >= cap && terminal === null) {
    return `Round over: its move cap of ${cap} moves is reached (score ${s.score}).`;
  }
  return `Game over after ${s.moves} moves (${terminal ?? "over"}): score ${s.score}.`;
}

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0];
}

function stopAll(): void {
  queue.length = 0;
  autoplay = false;
  $("autoplay").textContent = "Let it play";
  advisor.stop();
  setAdviceRunning(false);
}

/** A click or key on column `c`: queued while a move animates, never dropped. */
function enqueue(c: number): void {
  if (replay) {
    message("Replaying a file: use ◀ ▶ or “Back to the game” to play.");
    return;
  }
  queue.push(c);
  if (!busy) void pump();
}

async function pump(): Promise<void> {
  setBusy(true);
  try {
    while (queue.length > 0) {
      const c = queue.shift()!;
      await playColumn(c);
    }
  } finally {
    setBusy(false);
  }
}

async function playColumn(c: number): Promise<boolean> {
  if (view.gameOver) {
    message(`The game is over (score ${view.score}): start a new game, restart or undo.`);
    return false;
  }
  let step: Step;
  try {
    step = JSON.parse(game.play(c));
  } catch (e) {
    message(`Cannot drop in column ${c + 1}: ${(e as Error).message}.`);
    return false;
  }
  message("");
  advisor.stop();
  setAdviceRunning(false);
  clearBars();
  $("advice-info").textContent = "";
  const before = view.board;
  view = step.state;
  const ep = epoch;
  await animate(step, before);
  // A new game, a restart or a replay during the animation: the board shows
  // something else now, so this game's end is not announced over it.
  if (ep !== epoch) return true;
  if (step.state.gameOver) {
    message(overText(step.state, step.terminal), true);
  }
  return true;
}

function setAdviceRunning(on: boolean): void {
  $<HTMLButtonElement>("stop").disabled = !on;
  $<HTMLButtonElement>("advise").disabled = on;
}

/** Asks the fair player about the current position and shows the bars. */
async function advise(): Promise<number | null> {
  if (replay) {
    message("Advice is for the live game: press “Back to the game” first.");
    return null;
  }
  if (view.gameOver || view.next === null) {
    message("The game is over: there is nothing to advise.");
    return null;
  }
  const depth = Number($<HTMLSelectElement>("depth").value);
  const strata = Number($<HTMLSelectElement>("strata").value);
  const at = view.moves;
  // From the first advice on, the bars keep their room (moves and autoplay do not shift the page).
  $("bars").hidden = false;
  $("advice-info").textContent = `Thinking (d${depth}s${strata})…`;
  setAdviceRunning(true);
  try {
    const a = await advisor.advise({ board: view.board, next: view.next, rise: view.movesRemaining, depth, strata });
    if (a === null || view.moves !== at) return null;
    setAdviceRunning(false);
    showBars(a.record);
    $("bars").dataset.ms = a.ms.toFixed(1);
    $("bars").dataset.work = String(a.record.work);
    const best = a.record.action;
    $("advice-info").textContent =
      `d${depth}s${strata}: best column ${best === null ? "none" : best + 1}, ` +
      `${a.ms.toFixed(0)} ms, ${a.record.work.toLocaleString("en-US")} work ` +
      `(bars from the lowest value to the highest)`;
    return best;
  } catch (e) {
    setAdviceRunning(false);
    $("advice-info").textContent = "";
    message(`Advice failed: ${(e as Error).message}`);
    return null;
  }
}

async function runAutoplay(): Promise<void> {
  if (autoplay) {
    stopAll();
    return;
  }
  if (replay) {
    message("Press “Back to the game” first.");
    return;
  }
  autoplay = true;
  $("autoplay").textContent = "Stop playing";
  while (autoplay && !view.gameOver) {
    while (busy) await sleep(20);
    const best = await advise();
    if (!autoplay || best === null) break;
    await sleep(Number($<HTMLSelectElement>("auto-delay").value));
    if (!autoplay) break;
    enqueue(best);
    while (busy || queue.length > 0) await sleep(20);
  }
  autoplay = false;
  $("autoplay").textContent = "Let it play";
}

function shareUrl(): string | null {
  if (game.roundId() !== undefined) return null;
  const cols = Array.from(game.columns()).join("");
  const u = new URL(location.href);
  u.search = "";
  u.hash = "";
  u.searchParams.set("seed", hex(game.seed()));
  if (cols) u.searchParams.set("moves", cols);
  return u.toString();
}

/** Opens the game a URL names: `?seed=S` (decimal or 0x hex) and optional `&moves=` digits 0–6. */
function openFromUrl(): void {
  const p = new URLSearchParams(location.search);
  const seedText = p.get("seed");
  if (seedText === null) {
    startGame(randomSeed());
    if (p.has("moves")) {
      message(`Bad URL: "moves" needs a "seed" (e.g. ?seed=0x2c&moves=33); started a random game instead.`);
    }
    return;
  }
  let seed: number;
  try {
    seed = parseSeed(seedText);
  } catch (e) {
    startGame(randomSeed());
    message(`Bad URL: ${errText(e, seedText)}. Started a random game instead.`);
    return;
  }
  const movesText = p.get("moves") ?? "";
  const badAt = movesText.search(/[^0-6]/);
  if (badAt >= 0) {
    startGame(seed);
    // Whole characters (an emoji is two UTF-16 units), counted as such.
    const found = String.fromCodePoint(movesText.codePointAt(badAt)!);
    const position = Array.from(movesText.slice(0, badAt)).length + 1;
    message(`Bad URL: "moves" must be digits 0-6 (columns), found ${JSON.stringify(found)} at position ${position}. Started seed ${hex(seed)} from the opening.`);
    return;
  }
  startGame(seed, Array.from(movesText, Number));
}

// ---- replay of a dropped file ----

function enterReplay(r: Replay): void {
  epoch++;
  stopAll();
  replay = { r, pos: 0, running: false };
  replayPending = 0;
  $("replay-controls").hidden = false;
  $("replay-title").textContent = r.title;
  showSeed();
  clearBars();
  $("bars").hidden = true;
  // The live game's advice and link are not about the replayed game.
  $("advice-info").textContent = "";
  $<HTMLInputElement>("share-url").value = "";
  show(r.start);
  showReplayPos();
  const fail = r.failure ? ` Invalid tape: ${clip(r.failure, 400)}.` : "";
  message(`Replaying ${r.kind}: ${r.note}.${fail}`, !r.failure);
}

function leaveReplay(): void {
  if (!replay) return;
  epoch++;
  replay.running = false;
  replay = null;
  replayPending = 0;
  $("replay-controls").hidden = true;
  if (game) showSeed();
}

function showReplayPos(): void {
  if (!replay) return;
  $("replay-pos").textContent = `${replay.pos}/${replay.r.steps.length}`;
  $("replay-run").textContent = replay.running ? "Pause" : "Play";
}

/** Steps asked for (arrow keys, buttons) while a replayed move was animated: taken after it. */
let replayPending = 0;

async function replayStep(delta: number): Promise<void> {
  if (!replay) return;
  if (busy) {
    replayPending += delta;
    return;
  }
  const { r } = replay;
  const target = Math.max(0, Math.min(r.steps.length, replay.pos + delta));
  if (target === replay.pos) return;
  if (target === replay.pos + 1) {
    setBusy(true);
    const before = view.board;
    replay.pos = target;
    showReplayPos();
    await animate(r.steps[target - 1], before);
    setBusy(false);
  } else {
    replay.pos = target;
    show(target === 0 ? r.start : r.steps[target - 1].state);
  }
  showReplayPos();
  // Keys pressed during the animation: one more animates, several jump.
  const more = replayPending;
  replayPending = 0;
  if (more !== 0) await replayStep(more);
}

async function replayRun(): Promise<void> {
  if (!replay) return;
  replay.running = !replay.running;
  showReplayPos();
  while (replay && replay.running && replay.pos < replay.r.steps.length) {
    await replayStep(1);
    await sleep(Math.max(150, speed()));
  }
  if (replay) {
    replay.running = false;
    showReplayPos();
  }
}

async function openFile(file: File): Promise<void> {
  if (file.size > MAX_FILE_BYTES) {
    message(`“${clip(file.name, 100)}” is ${(file.size / 1048576).toFixed(1)} MB: too large for a tape or trace.`);
    return;
  }
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await file.arrayBuffer());
  } catch (e) {
    message(`Could not read “${clip(file.name, 100)}”: ${errText(e)}`);
    return;
  }
  // A NUL byte near the start: a binary file (an archive, an image), not JSON text.
  if (bytes.subarray(0, 4096).includes(0)) {
    message(`Cannot replay “${clip(file.name, 100)}”: not a drop7 tape or trace: a binary file, not JSON text.`);
    return;
  }
  let text: string;
  try {
    // Strict, as `drop7 replay` reads a file (File.text() would put U+FFFD
    // in place of a bad byte and replay the tape as if nothing were wrong).
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    message(`Cannot replay “${clip(file.name, 100)}”: invalid-format: the file is not UTF-8 text.`);
    return;
  }
  if (isRoundFile(text)) {
    startRound(text, file.name);
    return;
  }
  try {
    enterReplay(JSON.parse(replayFile(text)));
  } catch (e) {
    message(`Cannot replay “${clip(file.name, 100)}”: ${errText(e)}`);
  }
}

function wire(): void {
  buildBoard(enqueue);
  $("new-game").addEventListener("click", () => {
    const t = $<HTMLInputElement>("seed-input").value.trim();
    if (t === "") return startGame(randomSeed());
    try {
      startGame(parseSeed(t));
    } catch (e) {
      message(`Seed: ${errText(e, t)}`);
    }
  });
  // Enter in the Seed box starts that game, as New game does.
  $<HTMLInputElement>("seed-input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.isComposing) {
      e.preventDefault();
      $("new-game").click();
    }
  });
  $("random-game").addEventListener("click", () => startGame(randomSeed()));
  $("restart").addEventListener("click", () => begin(game.restarted()));
  $("undo").addEventListener("click", () => {
    if (replay) return message("Replaying a file: use ◀ to step back.");
    if (busy) return message("Wait for the move to finish.");
    stopAll();
    epoch++;
    if (!game.undo()) return message("Nothing to undo.");
    clearBars();
    show(JSON.parse(game.state()));
    message("");
  });
  $("share").addEventListener("click", () => {
    if (replay) {
      return message("A replay is not shared as a link (the file is not on the server): share the file itself, " +
        "or leave the replay (“Back to the game”) to share the game in play.", true);
    }
    const url = shareUrl();
    if (url === null) {
      const cols = Array.from(game.columns(), (c) => c + 1).join(" ");
      return message(`A round is not shared as a link (the round file is not on the server): ` +
        `share the file and the columns played${cols ? ": " + cols : ""}.`, true);
    }
    $<HTMLInputElement>("share-url").value = url;
    history.replaceState(null, "", url);
    navigator.clipboard?.writeText(url).then(
      () => message("Link copied: it reopens this game exactly.", true),
      () => message("Copy the link above: it reopens this game exactly.", true),
    );
  });
  $("advise").addEventListener("click", () => void advise());
  $("stop").addEventListener("click", () => {
    stopAll();
    $("advice-info").textContent = "Search stopped.";
  });
  $("autoplay").addEventListener("click", () => void runAutoplay());
  $("replay-next").addEventListener("click", () => void replayStep(1));
  $("replay-prev").addEventListener("click", () => void replayStep(-1));
  $("replay-first").addEventListener("click", () => void replayStep(-1e9));
  $("replay-run").addEventListener("click", () => void replayRun());
  $("replay-exit").addEventListener("click", () => {
    leaveReplay();
    show(JSON.parse(game.state()));
    message("");
  });
  $<HTMLInputElement>("file").addEventListener("change", (e) => {
    const f = (e.target as HTMLInputElement).files?.[0];
    if (f) void openFile(f);
    (e.target as HTMLInputElement).value = "";
  });
  const zone = $("drop-zone");
  document.addEventListener("dragover", (e) => {
    e.preventDefault();
    zone.hidden = false;
  });
  document.addEventListener("dragleave", (e) => {
    if (e.relatedTarget === null) zone.hidden = true;
  });
  document.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.hidden = true;
    const f = e.dataTransfer?.files?.[0];
    if (f) void openFile(f);
    else message("Drop a file (a round, a tape or a trace), not text or a link.");
  });
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key >= "1" && e.key <= "7") enqueue(Number(e.key) - 1);
    else if (e.key === "a") void advise();
    else if (e.key === "u") $("undo").click();
    else if (e.key === "ArrowRight") void replayStep(1);
    else if (e.key === "ArrowLeft") void replayStep(-1);
  });
}

async function main(): Promise<void> {
  try {
    await init({ module_or_path: new URL("./pkg/drop7_web_bg.wasm", import.meta.url) });
  } catch (e) {
    message(`Could not load the engine (WebAssembly): ${(e as Error).message}`);
    return;
  }
  wire();
  openFromUrl();
  document.body.dataset.ready = "true";
}

void main();
