// Parity of the WebAssembly build (web/dist/pkg, as the page loads it) in Node:
// the golden trajectories (4 files × 200 games, trace-format.md block 1,
// compared byte for byte) and the 861 golden search records (values as bit
// patterns, action, completed depth and, with the record's strict-LRU table,
// every counter), and the 24 golden latent games as recorded tapes and as
// scripted rounds played on the page's game. Target: 0 mismatches. Data: ../../testdata (copies of
// shared/golden, see testdata/README.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { initSync, traceLines, decideGolden, replayFile, WebGame } from "../dist/pkg/drop7_web.js";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
initSync({ module: readFileSync(here("../dist/pkg/drop7_web_bg.wasm")) });

function lines(name) {
  const text = gunzipSync(readFileSync(here(`../../testdata/${name}`))).toString("utf8");
  return text.split("\n").filter((l) => l.length > 0);
}

/** The golden line's first block: everything up to and including "board":"…", then "}". */
function firstBlock(line) {
  const i = line.indexOf('"board":"');
  return line.slice(0, i + 9 + 49 + 1) + "}";
}

for (const [file, stream] of [
  ["trajectories-center.jsonl.gz", false],
  ["trajectories-random.jsonl.gz", false],
  ["trajectories-stream-center.jsonl.gz", true],
  ["trajectories-stream-random.jsonl.gz", true],
]) {
  test(`golden trajectories ${file} through WebAssembly`, () => {
    const games = new Map();
    for (const l of lines(file)) {
      const seed = JSON.parse(l).seed;
      if (!games.has(seed)) games.set(seed, []);
      games.get(seed).push(l);
    }
    let mismatches = 0;
    let moves = 0;
    for (const [seed, g] of games) {
      const cols = Uint8Array.from(g.map((l) => JSON.parse(l).column));
      const got = traceLines(seed, stream, cols).split("\n").filter((l) => l.length > 0);
      for (let k = 0; k < g.length; k++) {
        moves++;
        if (got[k] !== firstBlock(g[k])) {
          if (mismatches < 3) console.error(`seed ${seed} move ${k + 1}:\n  got  ${got[k]}\n  want ${firstBlock(g[k])}`);
          mismatches++;
        }
      }
      if (got.length !== g.length) mismatches++;
    }
    console.log(`${file}: ${games.size} games, ${moves} moves, ${mismatches} mismatches`);
    assert.equal(games.size, 200);
    assert.equal(mismatches, 0);
  });
}

test("golden search roots through WebAssembly", () => {
  const recs = lines("search.jsonl.gz");
  const keys = ["action", "completedDepth", "values", "expectedScores", "work", "nodes",
    "cacheHits", "cacheEntries", "evictions", "leafCalls", "moveCalls"];
  let mismatches = 0;
  const t0 = performance.now();
  for (const line of recs) {
    const g = JSON.parse(line);
    const d = JSON.parse(decideGolden(line));
    const bad = keys.filter((k) => JSON.stringify(d[k]) !== JSON.stringify(g[k]));
    if (bad.length > 0) {
      if (mismatches < 3) console.error(`root ${g.root} ${g.config.name}: ${bad.join(", ")}`);
      mismatches++;
    }
  }
  console.log(`search.jsonl: ${recs.length} records, ${mismatches} mismatches, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  assert.equal(recs.length, 861);
  assert.equal(mismatches, 0);
});

/** The 24 golden latent games (trajectories-latent.jsonl), each a list of trace lines. */
function latentGames() {
  const text = gunzipSync(readFileSync(here("../testdata/trajectories-latent.jsonl.gz"))).toString("utf8");
  const games = [];
  for (const l of text.split("\n").filter(Boolean).map((x) => JSON.parse(x))) {
    if (l.move === 1) games.push([]);
    games.at(-1).push(l);
  }
  return games;
}

/** Whether a page state equals a golden line's board, score, level, moves to the rise and game-over flag. */
const sameState = (s, l) => s.board === l.board && s.score === l.score && s.level === l.level &&
  s.movesRemaining === l.movesRemaining && s.gameOver === l.gameOver;

test("golden latent games replayed as tapes through WebAssembly", () => {
  const games = latentGames();
  let mismatches = 0;
  let moves = 0;
  for (const g of games) {
    const round = JSON.parse(readFileSync(here(`../testdata/rounds/${g[0].roundId}.json`), "utf8"));
    const tape = {
      format: "drop7-recorded-game-v2",
      ruleset: "drop7-hardcore-5-v1",
      columns: g.map((l) => l.column),
      discs: round.discs.slice(0, g.length),
      dropLatentValues: g.map(() => null),
      coveredRows: round.latentRows.slice(0, g.at(-1).coveredRowsConsumed),
    };
    const r = JSON.parse(replayFile(JSON.stringify(tape)));
    if (r.failure !== null || r.steps.length !== g.length) mismatches++;
    for (let k = 0; k < Math.min(g.length, r.steps.length); k++) {
      const s = r.steps[k].state;
      const l = g[k];
      moves++;
      if (!sameState(s, l)) mismatches++;
    }
  }
  console.log(`trajectories-latent.jsonl: ${games.length} games as tapes, ${moves} moves, ${mismatches} mismatches`);
  assert.equal(games.length, 24);
  assert.equal(mismatches, 0);
});

test("golden latent games played as scripted rounds through WebAssembly", () => {
  const games = latentGames();
  let mismatches = 0;
  let moves = 0;
  for (const g of games) {
    const game = WebGame.fromRound(readFileSync(here(`../testdata/rounds/${g[0].roundId}.json`), "utf8"));
    for (const l of g) {
      moves++;
      const s = JSON.parse(game.play(l.column)).state;
      if (!sameState(s, l)) mismatches++;
    }
    game.free();
  }
  console.log(`trajectories-latent.jsonl: ${games.length} games as rounds, ${moves} moves, ${mismatches} mismatches`);
  assert.equal(games.length, 24);
  assert.equal(mismatches, 0);
});
