// The page in real headless Chromium (Debian's /usr/bin/chromium driven by
// playwright-core; no browser download), served by `drop7 serve`:
// a 200+-move game played by clicking, checked move by move against
// `drop7 trace` for the same seed and columns; advice bars equal to
// `drop7 decide` on the same position (bit patterns), with timings; bad URL,
// corrupt/foreign file, full column and after-game-over messages; clicks
// queued during animation; keyboard; stop; share URL; tape replay by drop;
// a phone-sized screen; the layout at 360 and 1280 px; the built page from a
// plain static host under a sub-path. Any page error, console error or failed request fails the run.
// Screenshots go to web/test-results/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const BIN = process.env.DROP7_BIN ?? here("../../target/release/drop7");
const SHOTS = here("../test-results");
mkdirSync(SHOTS, { recursive: true });

let server;
let base;
let browser;
const pageErrors = [];

/** Records page errors, console errors and HTTP errors of `page` (the last test checks none came). */
function watch(page) {
  page.on("pageerror", (e) => pageErrors.push(`page error: ${e}`));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(`console error: ${m.text()}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) pageErrors.push(`HTTP ${r.status()} ${r.url()}`);
  });
  return page;
}

function drop7(args, input) {
  return execFileSync(BIN, args, { input, encoding: "utf8", maxBuffer: 1 << 28 });
}

before(async () => {
  server = spawn(BIN, ["serve", "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  base = await new Promise((resolve, reject) => {
    let out = "";
    server.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (m) resolve(m[0]);
    });
    server.on("exit", (c) => reject(new Error(`drop7 serve exited with ${c}`)));
  });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  await browser?.close();
  server?.kill();
});

async function open(query = "", speed = "0") {
  const page = watch(await browser.newPage({ viewport: { width: 900, height: 820 } }));
  await page.goto(base + query);
  await page.waitForSelector("body[data-ready=true]");
  await page.selectOption("[data-testid=speed]", speed);
  return page;
}

/** The page's board (49 trace characters) and status, read through the test hooks. */
async function read(page) {
  return page.evaluate(() => {
    let board = "";
    for (let r = 0; r < 7; r++)
      for (let c = 0; c < 7; c++)
        board += document.querySelector(`[data-testid=cell-${r}-${c}]`).dataset.value;
    const t = (id) => document.querySelector(`[data-testid=${id}]`);
    return {
      board,
      score: Number(t("score").textContent),
      level: Number(t("level").textContent),
      movesRemaining: Number(t("moves-remaining").textContent),
      next: t("next-disc").dataset.value,
      gameOver: !t("game-over").hidden,
      moves: Number(t("board").dataset.moves),
    };
  });
}

async function settled(page, moves) {
  await page.waitForFunction(
    (m) => {
      const b = document.querySelector("[data-testid=board]");
      return b.dataset.busy === "false" && Number(b.dataset.moves) === m;
    },
    moves,
  );
}

const message = (page) => page.textContent("[data-testid=message]");

/** Whether the page state `s` differs from trace line `l` (board, score, level, moves to the rise, game over); logs it under `what` unless null. */
function differs(s, l, what) {
  const pick = (x) => JSON.stringify({ board: x.board, score: x.score, level: x.level, movesRemaining: x.movesRemaining, gameOver: x.gameOver });
  if (pick(s) === pick(l)) return false;
  if (what) console.error(`${what}: got ${pick(s)} want ${pick(l)}`);
  return true;
}

// Games of the fair player at d1s1, seeds 1-6 (about 300 moves in all).
const GAMES = 6;
let gamesCache;
function games() {
  if (!gamesCache) {
    const all = drop7(["trace", "--policy", "fair:d1s1", "--seed-start", "1", "--games", String(GAMES)])
      .trim().split("\n").map((l) => JSON.parse(l));
    gamesCache = [];
    for (const l of all) {
      if (l.move === 1) gamesCache.push([]);
      gamesCache.at(-1).push(l);
    }
  }
  return gamesCache;
}
/** The longest of those games (for mid-game positions). */
function trace() {
  return games().reduce((a, b) => (b.length > a.length ? b : a));
}
const SEED = () => trace()[0].seed;

test("200+ moves by clicking match drop7 trace, then game over refuses clicks", async () => {
  const gs = games();
  const total = gs.reduce((n, g) => n + g.length, 0);
  assert.ok(total >= 200, `the traces have only ${total} moves`);
  const page = await open(`?seed=${gs[0][0].seed}`);
  let mismatches = 0;
  for (const [i, lines] of gs.entries()) {
    if (i > 0) {
      // The next game through the seed box and the New game button, or
      // Enter in the seed box.
      await page.fill("[data-testid=seed-input]", String(lines[0].seed));
      if (i % 2 === 1) await page.press("[data-testid=seed-input]", "Enter");
      else await page.click("[data-testid=new-game]");
      await settled(page, 0);
    }
    const start = await read(page);
    assert.equal(start.board, "0000000000000000000000000000000000000000008888888");
    assert.equal(start.next, String(lines[0].disc));
    for (const l of lines) {
      await page.click(`[data-testid=drop-${l.column}]`);
      await settled(page, l.move);
      if (differs(await read(page), l, mismatches < 3 ? `seed ${l.seed} move ${l.move}` : null)) mismatches++;
      if (i === 3 && l.move === 40) await page.screenshot({ path: `${SHOTS}/mid-game.png` });
    }
    assert.equal(lines.at(-1).gameOver, true);
    await page.click("[data-testid=drop-3]");
    assert.match(await message(page), /game is over/);
  }
  console.log(`clicked ${total} moves in ${gs.length} games: ${mismatches} mismatches`);
  assert.equal(mismatches, 0);
  await page.screenshot({ path: `${SHOTS}/game-over.png` });
  await page.close();
});

test("advice bars equal drop7 decide (d4s5) on mid-game positions; timings", async () => {
  const lines = trace();
  const page = await open(`?seed=${SEED()}&moves=${lines.slice(0, 60).map((l) => l.column).join("")}`);
  const timings = [];
  for (const k of [60, 61, 62]) {
    if (k > 60) {
      await page.click(`[data-testid=drop-${lines[k - 1].column}]`);
      await settled(page, k);
    }
    const s = await read(page);
    assert.equal(s.board, lines[k - 1].board);
    await page.click("[data-testid=advise]");
    await page.waitForFunction(() => document.querySelector("[data-testid=value-0]").dataset.value !== undefined);
    const bars = await page.evaluate(() =>
      [...Array(7).keys()].map((c) => document.querySelector(`[data-testid=value-${c}]`).dataset));
    const ms = Number(await page.getAttribute("[data-testid=bars]", "data-ms"));
    const native = JSON.parse(drop7(["decide", "--board", s.board, "--next", s.next,
      "--rise", String(s.movesRemaining), "--depth", "4", "--strata", "5"]));
    assert.deepEqual(bars.map((b) => b.bits || null), native.values);
    assert.deepEqual(bars.map((b) => (b.value ? Number(b.value) : null)), native.valuesDecimal);
    const best = await page.$$eval(".bar.best", (els) => els.map((e) => e.dataset.testid));
    assert.deepEqual(best, [`value-${native.action}`]);
    assert.equal(Number(await page.getAttribute("[data-testid=bars]", "data-work")), native.work);
    timings.push({ move: k, board: s.board, chromiumMs: ms, nativeMs: native.ms });
    if (k === 60) await page.screenshot({ path: `${SHOTS}/advice.png` });
  }
  console.log("d4s5 advice timings (ms):", JSON.stringify(timings));
  // Depth 5 (the CLI's deeper default table, 2^20 entries): values and work as `drop7 decide`'s.
  await page.selectOption("[data-testid=depth]", "5");
  await page.selectOption("[data-testid=strata]", "1");
  await page.evaluate(() => { delete document.querySelector("[data-testid=value-0]").dataset.value; });
  await page.click("[data-testid=advise]");
  await page.waitForFunction(() => document.querySelector("[data-testid=value-0]").dataset.value !== undefined);
  const s = await read(page);
  const native = JSON.parse(drop7(["decide", "--board", s.board, "--next", s.next, "--rise", String(s.movesRemaining), "--depth", "5", "--strata", "1"]));
  const bits = await page.evaluate(() => [...Array(7).keys()].map((c) => document.querySelector(`[data-testid=value-${c}]`).dataset.bits || null));
  assert.deepEqual(bits, native.values);
  assert.equal(Number(await page.getAttribute("[data-testid=bars]", "data-work")), native.work);
  await page.close();
});

test("bad URLs give a message and a working page", async () => {
  let page = await open("?seed=banana");
  assert.match(await message(page), /Bad URL: invalid seed "banana"/);
  await page.screenshot({ path: `${SHOTS}/bad-url.png` });
  await page.click("[data-testid=drop-3]");
  await settled(page, 1);
  await page.close();
  page = await open("?seed=7&moves=33x1");
  assert.match(await message(page), /Bad URL: "moves" must be digits 0-6 \(columns\), found "x" at position 3\./);
  assert.equal((await read(page)).moves, 0);
  await page.close();
  // A character outside the BMP is named whole, at its place in characters.
  page = await open("?seed=7&moves=3" + encodeURIComponent("\u{1F600}") + "1");
  assert.match(await message(page), /found "\u{1F600}" at position 2\./u);
  await page.close();
  page = await open("?seed=7&moves=" + "3".repeat(40));
  assert.match(await message(page), /Shared URL: move \d+ \(digit 3: column 4\) cannot be played/);
  await page.close();
  page = await open("?seed=99999999999");
  assert.match(await message(page), /Bad URL/);
  await page.close();
  // A 10,000-digit seed is named, not echoed whole.
  page = await open("?seed=" + "9".repeat(10000));
  const long = await message(page);
  assert.match(long, /^Bad URL: invalid seed "9{40}… \(9960 more characters\)": expected .*\. Started a random game instead\.$/);
  assert.ok(long.length < 500, `${long.length} characters`);
  await page.close();
  page = await open("?moves=33");
  assert.match(await message(page), /Bad URL: "moves" needs a "seed"/);
  await page.click("[data-testid=drop-3]");
  await settled(page, 1);
  await page.close();
});

test("a full column and clicks during animation: queued, in order, with a message", async () => {
  const page = await open("?seed=5", "220");
  // Ten clicks while the first animates: all are played, in order.
  const want = drop7(["trace", "--policy", "center", "--seed-start", "5", "--max-moves", "10"]).trim().split("\n").map((l) => JSON.parse(l));
  for (const l of want) await page.click(`[data-testid=drop-${l.column}]`, { noWaitAfter: true });
  await settled(page, want.length);
  assert.equal((await read(page)).board, want.at(-1).board);
  // The same ten clicks in one burst (a single task): still ten moves.
  const burst = await open("?seed=5", "220");
  await burst.evaluate((cols) => cols.forEach((c) => document.querySelector(`[data-testid=drop-${c}]`).click()), want.map((l) => l.column));
  assert.equal(await burst.getAttribute("[data-testid=board]", "data-busy"), "true");
  await settled(burst, want.length);
  assert.deepEqual(await read(burst), await read(page));
  await burst.close();
  // A full column (found in the traces): a message, never a broken page.
  let full = null;
  for (const g of games()) {
    for (const l of g) {
      const c = [...l.board.slice(0, 7)].findIndex((v) => v !== "0");
      if (!full && !l.gameOver && c >= 0) full = { seed: l.seed, moves: g.slice(0, l.move).map((x) => x.column), column: c };
    }
  }
  assert.ok(full, "no position with a full column in the traces");
  const fp = await open(`?seed=${full.seed}&moves=${full.moves.join("")}`);
  await fp.click(`[data-testid=drop-${full.column}]`);
  assert.equal(await message(fp), `Cannot drop in column ${full.column + 1}: column ${full.column + 1} is full.`);
  assert.equal((await read(fp)).moves, full.moves.length);
  await fp.screenshot({ path: `${SHOTS}/full-column.png` });
  await fp.close();
  // Keyboard, undo.
  const before = await read(page);
  if (!before.gameOver) {
    const legal = before.board.slice(0, 7).indexOf("0");
    await page.keyboard.press(String(legal + 1));
    await settled(page, before.moves + 1);
    await page.click("[data-testid=undo]");
    await settled(page, before.moves);
    assert.equal((await read(page)).board, before.board);
  }
  await page.close();
});

test("waves animate; the fair player plays on its own and stops", async () => {
  // The first move of the traces that pops something, animated at normal speed.
  let at = null;
  for (const g of games()) for (const l of g) if (!at && l.waves.length > 1) at = { seed: l.seed, moves: g.slice(0, l.move - 1).map((x) => x.column), line: l, game: g };
  assert.ok(at, "no chain in the traces");
  const page = await open(`?seed=${at.seed}&moves=${at.moves.join("")}`, "220");
  await page.click(`[data-testid=drop-${at.line.column}]`);
  await page.waitForSelector(".cell.pop");
  await page.screenshot({ path: `${SHOTS}/wave.png` });
  await settled(page, at.line.move);
  const s = await read(page);
  assert.equal(s.board, at.line.board);
  assert.equal(s.score, at.line.score);
  // Let it play at d1s1 without delay, then stop it.
  await page.selectOption("[data-testid=speed]", "0");
  await page.selectOption("[data-testid=depth]", "1");
  await page.selectOption("[data-testid=strata]", "1");
  await page.selectOption("[data-testid=auto-delay]", "0");
  await page.click("[data-testid=autoplay]");
  await page.waitForFunction((m) => Number(document.querySelector("[data-testid=board]").dataset.moves) >= m + 3 ||
    !document.querySelector("[data-testid=game-over]").hidden, s.moves);
  await page.click("[data-testid=autoplay]");
  const after = await read(page);
  await page.waitForTimeout(300);
  const later = await read(page);
  assert.ok(later.moves - after.moves <= 1, "still playing after stop");
  // It played as the fair player at d1s1 does (the traces are fair:d1s1 games).
  await settled(page, later.moves);
  await page.click("[data-testid=share]");
  const played = new URL(await page.inputValue("[data-testid=share-url]")).searchParams.get("moves");
  assert.equal(played, at.game.slice(0, later.moves).map((l) => l.column).join(""));
  await page.close();
});

test("a new game during an animation shows the new game, not stale frames", async () => {
  let at = null;
  for (const g of games()) for (const l of g) if (!at && l.waves.length > 1) at = { seed: l.seed, moves: g.slice(0, l.move - 1).map((x) => x.column), line: l };
  const page = await open(`?seed=${at.seed}&moves=${at.moves.join("")}`, "220");
  await page.click(`[data-testid=drop-${at.line.column}]`);
  await page.waitForSelector(".cell.pop");
  await page.click("[data-testid=restart]");
  await page.waitForTimeout(1500);
  const s = await read(page);
  assert.equal(s.moves, 0);
  assert.equal(s.board, "0000000000000000000000000000000000000000008888888");
  assert.equal(s.score, 0);
  await page.close();
});

test("a restart while the last move animates announces no stale game over", async () => {
  // The shortest game's last move ends it; restart before its animation does.
  const g = games().reduce((a, b) => (b.length < a.length ? b : a));
  const last = g.at(-1);
  const page = await open(`?seed=${last.seed}&moves=${g.slice(0, -1).map((l) => l.column).join("")}`, "220");
  await page.click(`[data-testid=drop-${last.column}]`);
  await page.click("[data-testid=restart]");
  await page.waitForTimeout(1500);
  const s = await read(page);
  assert.equal(s.moves, 0);
  assert.doesNotMatch(await message(page), /Game over/);
  // Played to its end without a restart, the same move does announce it.
  await page.goto(base + `?seed=${last.seed}&moves=${g.slice(0, -1).map((l) => l.column).join("")}`);
  await page.waitForSelector("body[data-ready=true]");
  await page.click(`[data-testid=drop-${last.column}]`);
  await page.waitForFunction(() => /Game over/.test(document.querySelector("[data-testid=message]").textContent));
  await page.close();
});

test("stop a long search; share a URL that reopens the game", async () => {
  const lines = trace();
  const page = await open(`?seed=${SEED()}&moves=${lines.slice(0, 30).map((l) => l.column).join("")}`);
  await page.selectOption("[data-testid=depth]", "5");
  await page.selectOption("[data-testid=strata]", "10");
  await page.click("[data-testid=advise]");
  await page.waitForTimeout(300);
  await page.click("[data-testid=stop]");
  assert.equal(await page.textContent("[data-testid=advice-info]"), "Search stopped.");
  await page.click(`[data-testid=drop-${lines[30].column}]`);
  await settled(page, 31);
  await page.click("[data-testid=share]");
  // The share field has a visible label (found by it, as a screen reader names it).
  const url = await page.getByLabel("Share URL", { exact: true }).inputValue();
  assert.equal(url, await page.inputValue("[data-testid=share-url]"));
  assert.ok(await page.isVisible("label[for=share-url]"), "the Share URL label is visible");
  assert.equal(await page.getAttribute("[data-testid=share-url]", "aria-label"), null);
  const s = await read(page);
  const again = watch(await browser.newPage());
  await again.goto(url);
  await again.waitForSelector("body[data-ready=true]");
  assert.deepEqual(await read(again), s);
  assert.equal(s.board, lines[30].board);
  await again.close();
  await page.close();
});

/** A golden latent game's trace lines (trajectories-latent.jsonl) and its round file's text. */
function latentGame(roundId, policy) {
  const text = gunzipSync(readFileSync(here("../testdata/trajectories-latent.jsonl.gz"))).toString();
  const lines = text.split("\n").filter(Boolean).map((l) => JSON.parse(l))
    .filter((l) => l.roundId === roundId && l.policy === policy);
  return { lines, roundText: readFileSync(here(`../testdata/rounds/${roundId}.json`), "utf8") };
}

/** A drop7-recorded-game-v2 tape of a golden latent game (Gauntlet 01, center policy). */
function goldenTape() {
  const { lines, roundText } = latentGame("gauntlet-01", "center");
  const round = JSON.parse(roundText);
  const n = lines.length;
  const tape = {
    format: "drop7-recorded-game-v2",
    ruleset: "drop7-hardcore-5-v1",
    columns: lines.map((l) => l.column),
    discs: round.discs.slice(0, n),
    dropLatentValues: lines.map(() => null),
    coveredRows: round.latentRows.slice(0, lines.at(-1).coveredRowsConsumed),
  };
  return { tape, lines };
}

async function dropFile(page, name, text) {
  await page.evaluate(([name, text]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], name, { type: "application/json" }));
    document.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [name, text]);
}

test("dropped files: a tape replays move by move; corrupt and foreign files get messages", async () => {
  const page = await open("?seed=1");
  await dropFile(page, "empty.json", "");
  await page.waitForFunction(() => /empty.json/.test(document.querySelector("[data-testid=message]").textContent));
  assert.match(await message(page), /Cannot replay “empty.json”: the file is empty/);
  await dropFile(page, "junk.bin", "\u0000\u0001PK garbage");
  await page.waitForFunction(() => /Cannot replay/.test(document.querySelector("[data-testid=message]").textContent));
  assert.match(await message(page), /Cannot replay “junk.bin”: not a drop7 tape or trace/);
  await page.setInputFiles("[data-testid=file]", { name: "other.json", mimeType: "application/json", buffer: Buffer.from('{"hello": "world"}') });
  await page.waitForFunction(() => /other.json/.test(document.querySelector("[data-testid=message]").textContent));
  assert.match(await message(page), /not a drop7 tape or trace/);
  // As drop7 replay reads them: a byte that is not UTF-8 (here inside the
  // format's value), and JSON nested too deeply to read.
  {
    const text = JSON.stringify(goldenTape().tape);
    const at = text.indexOf("drop7-recorded-game");
    const latin1 = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xff]), Buffer.from(text.slice(at))]);
    await page.setInputFiles("[data-testid=file]", { name: "latin1.json", mimeType: "application/json", buffer: latin1 });
    await page.waitForFunction(() => /latin1.json/.test(document.querySelector("[data-testid=message]").textContent));
    assert.match(await message(page), /Cannot replay “latin1.json”: invalid-format: the file is not UTF-8 text/);
    await dropFile(page, "deep.json", `{"format":${"[".repeat(5000)}${"]".repeat(5000)}}`);
    await page.waitForFunction(() => /deep.json/.test(document.querySelector("[data-testid=message]").textContent));
    assert.match(await message(page), /invalid-format: invalid JSON \(recursion limit exceeded/);
    await dropFile(page, "array.json", `${"[".repeat(5000)}${"]".repeat(5000)}`);
    await page.waitForFunction(() => /array.json/.test(document.querySelector("[data-testid=message]").textContent));
    assert.match(await message(page), /Cannot replay “array.json”: not a drop7 tape or trace: a JSON array/);
  }
  await page.screenshot({ path: `${SHOTS}/bad-file.png` });
  // Advice on the live game, then a replay: the advice line goes with the bars.
  await page.selectOption("[data-testid=depth]", "1");
  await page.click("[data-testid=advise]");
  await page.waitForFunction(() => /best column/.test(document.querySelector("[data-testid=advice-info]").textContent));
  // The live game's link, shown before the replay: the replay clears it (it is not the tape's).
  await page.click("[data-testid=share]");
  assert.match(await page.inputValue("[data-testid=share-url]"), /seed=/);
  const { tape, lines } = goldenTape();
  const bad = { ...tape, discs: tape.discs.slice(1) };
  await dropFile(page, "short.json", JSON.stringify(bad));
  await page.waitForFunction(() => /short.json/.test(document.querySelector("[data-testid=message]").textContent));
  assert.match(await message(page), /invalid-format: discs has \d+ entries but columns has/);

  await dropFile(page, "gauntlet-01-center.json", JSON.stringify(tape));
  await page.waitForSelector("[data-testid=replay-title]:has-text('valid and complete')");
  assert.equal(await page.textContent("[data-testid=seed]"), "tape");
  assert.equal(await page.textContent("[data-testid=advice-info]"), "");
  assert.equal(await page.inputValue("[data-testid=share-url]"), "");
  assert.ok(await page.isHidden("[data-testid=bars]"));
  // The Seed box shows what is on the board: a tape has no seed (not the live game's 0x00000001).
  assert.equal(await page.inputValue("[data-testid=seed-input]"), "");
  assert.equal(await page.getAttribute("[data-testid=seed-input]", "placeholder"), "none (tape)");
  for (let k = 1; k <= Math.min(25, lines.length); k++) {
    await page.click("[data-testid=replay-next]");
    await settled(page, k);
    const s = await read(page);
    assert.equal(s.board, lines[k - 1].board, `tape move ${k}`);
    assert.equal(s.score, lines[k - 1].score);
  }
  await page.screenshot({ path: `${SHOTS}/replay-tape.png` });
  // Share during a replay: a link would name the live game behind it, not the tape.
  const urlBefore = page.url();
  await page.click("[data-testid=share]");
  assert.match(await message(page), /A replay is not shared as a link/);
  assert.equal(page.url(), urlBefore);
  // Arrow keys pressed while a move is animated are not lost: three quick presses, three moves.
  const at = Math.min(25, lines.length);
  if (at + 3 <= lines.length) {
    for (let k = 0; k < 3; k++) await page.keyboard.press("ArrowRight");
    await settled(page, at + 3);
    assert.equal((await read(page)).board, lines[at + 2].board);
    assert.match(await page.textContent("[data-testid=replay-pos]"), new RegExp(`^${at + 3}/`));
  }
  // A trace file replays too (and is re-played on its driver).
  const traceText = drop7(["trace", "--policy", "random", "--seed-start", "9"]);
  await page.setInputFiles("[data-testid=file]", { name: "t.jsonl", mimeType: "text/plain", buffer: Buffer.from(traceText) });
  await page.waitForSelector("[data-testid=replay-title]:has-text('trace of seed 0x00000009')");
  assert.match(await message(page), /reproduced by the headless driver/);
  assert.equal(await page.textContent("[data-testid=seed]"), "0x00000009");
  assert.equal(await page.inputValue("[data-testid=seed-input]"), "0x00000009");
  await page.click("[data-testid=replay-exit]");
  assert.equal((await read(page)).moves, 0);
  assert.equal(await page.textContent("[data-testid=seed]"), "0x00000001");
  assert.equal(await page.inputValue("[data-testid=seed-input]"), "0x00000001");
  assert.equal(await page.getAttribute("[data-testid=seed-input]", "placeholder"), "decimal or 0x hex");
  await page.close();
});

test("a dropped scripted round is played in latent mode, matching the golden latent game", async () => {
  const page = await open("?seed=1");
  // A corrupt round: a message naming the field, the game goes on.
  const { lines, roundText } = latentGame("gauntlet-03", "random");
  const bad = JSON.parse(roundText);
  bad.discs[3] = 0;
  await dropFile(page, "bad-round.json", JSON.stringify(bad));
  await page.waitForFunction(() => /bad-round/.test(document.querySelector("[data-testid=message]").textContent));
  assert.match(await message(page), /Cannot play “bad-round.json”: not a playable drop7-scripted-round-v1 round: discs\[3\] must be an integer 1-7, got 0/);
  assert.equal(await page.textContent("[data-testid=seed]"), "0x00000001");

  await dropFile(page, "gauntlet-03.json", roundText);
  await page.waitForFunction(() => /Playing round gauntlet-03/.test(document.querySelector("[data-testid=message]").textContent));
  assert.equal(await page.textContent("[data-testid=seed]"), "round gauntlet-03");
  assert.equal(await page.inputValue("[data-testid=seed-input]"), "");
  assert.equal(await page.getAttribute("[data-testid=seed-input]", "placeholder"), "none (round)");
  const round = JSON.parse(roundText);
  assert.equal((await read(page)).next, String(round.discs[0]));
  let mismatches = 0;
  for (const l of lines) {
    await page.click(`[data-testid=drop-${l.column}]`);
    await settled(page, l.move);
    const s = await read(page);
    if (differs(s, l, mismatches < 3 ? `round move ${l.move}` : null)) mismatches++;
    if (!l.gameOver) assert.equal(s.next, String(round.discs[l.move]), `next disc after move ${l.move}`);
    if (l.move === 12) await page.screenshot({ path: `${SHOTS}/round.png` });
  }
  console.log(`round gauntlet-03 (random policy's columns): ${lines.length} moves clicked, ${mismatches} mismatches`);
  assert.equal(mismatches, 0);
  assert.equal(lines.at(-1).gameOver, true);
  // Undo and Restart keep the round; Share explains itself.
  await page.click("[data-testid=undo]");
  await settled(page, lines.length - 1);
  assert.equal((await read(page)).board, lines.at(-2).board);
  await page.click("[data-testid=share]");
  assert.match(await message(page), /A round is not shared as a link/);
  await page.click("[data-testid=restart]");
  await settled(page, 0);
  const s = await read(page);
  assert.equal(s.board, "0000000000000000000000000000000000000000008888888");
  assert.equal(s.next, String(round.discs[0]));
  assert.equal(await page.textContent("[data-testid=seed]"), "round gauntlet-03");
  // A new seeded game leaves the round.
  await page.fill("[data-testid=seed-input]", "7");
  await page.click("[data-testid=new-game]");
  assert.equal(await page.textContent("[data-testid=seed]"), "0x00000007");
  assert.equal(await page.inputValue("[data-testid=seed-input]"), "0x00000007");
  await page.close();
});

test("on a phone-sized screen the whole board fits, and plays by touch and keyboard", async () => {
  const page = watch(await browser.newPage({ viewport: { width: 360, height: 740 }, hasTouch: true, isMobile: true }));
  await page.goto(base + "?seed=0x2c");
  await page.waitForSelector("body[data-ready=true]");
  await page.selectOption("[data-testid=speed]", "0");
  const fit = await page.evaluate(() => {
    const boxes = [...document.querySelectorAll("[data-testid^=cell-], [data-testid^=drop-]")].map((e) => e.getBoundingClientRect());
    return { scroll: document.documentElement.scrollWidth, width: innerWidth, left: Math.min(...boxes.map((b) => b.left)), right: Math.max(...boxes.map((b) => b.right)) };
  });
  assert.ok(fit.scroll <= fit.width, `the page scrolls sideways: ${JSON.stringify(fit)}`);
  assert.ok(fit.left >= 0 && fit.right <= fit.width, `the board does not fit: ${JSON.stringify(fit)}`);
  const want = drop7(["trace", "--policy", "center", "--seed-start", "44", "--max-moves", "2"]).trim().split("\n").map((l) => JSON.parse(l));
  await page.tap(`[data-testid=drop-${want[0].column}]`);
  await settled(page, 1);
  // Keyboard only: the column buttons come first in the tab order; Enter drops.
  await page.focus("[data-testid=drop-0]");
  for (let k = 0; k < want[1].column; k++) await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), `drop-${want[1].column}`);
  await page.keyboard.press("Enter");
  await settled(page, 2);
  assert.equal((await read(page)).board, want[1].board);
  await page.screenshot({ path: `${SHOTS}/phone.png`, fullPage: true });
  await page.close();
});

/** Boxes (top, bottom, left, right, in page coordinates) of the board, the bars and the controls. */
async function layout(page) {
  return page.evaluate(() => {
    const box = (id) => {
      const b = document.getElementById(id).getBoundingClientRect();
      return { top: b.top + scrollY, bottom: b.bottom + scrollY, left: b.left, right: b.right, height: b.height };
    };
    return { board: box("board"), bars: box("bars"), controls: box("controls"), scroll: document.documentElement.scrollWidth };
  });
}

test("layout: no empty room under the board at 360 px until advice is asked; side by side at 1280 px", async () => {
  const phone = watch(await browser.newPage({ viewport: { width: 360, height: 740 }, hasTouch: true, isMobile: true }));
  await phone.goto(base + "?seed=0x2c&moves=33");
  await phone.waitForSelector("body[data-ready=true]");
  await phone.selectOption("[data-testid=speed]", "0");
  let l = await layout(phone);
  await phone.screenshot({ path: `${SHOTS}/layout-360.png`, fullPage: true });
  // Under the board: only the chain line, the message line and the gap (no empty bar area).
  assert.equal(l.bars.height, 0, `empty bars take room: ${JSON.stringify(l)}`);
  assert.ok(l.controls.top - l.board.bottom <= 80, `a gap under the board: ${JSON.stringify(l)}`);
  assert.ok(l.controls.right <= 360 && l.scroll <= 360, `too wide: ${JSON.stringify(l)}`);
  // Advice makes room for the bars, and keeps it across a move (the controls do not jump).
  await phone.selectOption("[data-testid=depth]", "1");
  await phone.click("[data-testid=advise]");
  await phone.waitForFunction(() => document.querySelector("[data-testid=value-0]").dataset.value !== undefined);
  const advised = await layout(phone);
  assert.ok(advised.bars.height > 0 && advised.bars.top >= l.board.bottom && advised.controls.top >= advised.bars.bottom,
    `bars: ${JSON.stringify(advised)}`);
  await phone.screenshot({ path: `${SHOTS}/layout-360-advice.png`, fullPage: true });
  await phone.click("[data-testid=drop-3]");
  await settled(phone, 3);
  assert.equal((await layout(phone)).controls.top, advised.controls.top);
  // A new game starts without the room again.
  await phone.click("[data-testid=random-game]");
  l = await layout(phone);
  assert.equal(l.bars.height, 0);
  await phone.close();

  const desk = watch(await browser.newPage({ viewport: { width: 1280, height: 900 } }));
  await desk.goto(base + "?seed=0x2c&moves=33");
  await desk.waitForSelector("body[data-ready=true]");
  l = await layout(desk);
  await desk.screenshot({ path: `${SHOTS}/layout-1280.png`, fullPage: true });
  assert.ok(l.controls.left >= l.board.right && l.controls.top < l.board.top, `controls beside the board: ${JSON.stringify(l)}`);
  assert.equal(l.board.right - l.board.left, 7 * 56 + 8 * 4, "full-size cells on a desktop");
  await desk.close();
});

test("the built page works from a plain static host, under a sub-path", async () => {
  // Any static server will do: this one knows only file types (as python3 -m http.server).
  const dist = here("../dist");
  const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm" };
  const host = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = path.startsWith("/some/sub/") ? `${dist}/${path.slice("/some/sub/".length)}` : null;
    if (file && (file.endsWith("/") || file === `${dist}/`)) file += "index.html";
    if (!file || file.includes("..") || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": types[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  await new Promise((r) => host.listen(0, "127.0.0.1", r));
  try {
    const lines = trace();
    const page = watch(await browser.newPage());
    await page.goto(`http://127.0.0.1:${host.address().port}/some/sub/?seed=${SEED()}&moves=${lines.slice(0, 20).map((l) => l.column).join("")}`);
    await page.waitForSelector("body[data-ready=true]");
    const s = await read(page);
    assert.equal(s.board, lines[19].board);
    assert.equal(s.score, lines[19].score);
    await page.selectOption("[data-testid=depth]", "2");
    await page.click("[data-testid=advise]");
    await page.waitForFunction(() => document.querySelector("[data-testid=value-0]").dataset.value !== undefined);
    await page.close();
  } finally {
    host.close();
  }
});

test("no page errors, console errors or failed requests", () => {
  assert.deepEqual(pageErrors, []);
});
