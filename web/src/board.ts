// Rendering: the 7×7 board with its test hooks, the status line, the value bars.
import type { DecideRecord, Frame, StateView } from "./types.js";

const $ = (id: string) => document.getElementById(id)!;

/** Builds the cells (`data-testid="cell-R-C"`), column buttons (`drop-C`) and bars (`value-C`). */
export function buildBoard(onDrop: (column: number) => void): void {
  const board = $("board");
  for (let r = 0; r < 7; r++) {
    for (let c = 0; c < 7; c++) {
      const cell = document.createElement("div");
      cell.className = "cell";
      cell.dataset.testid = "cell-" + r + "-" + c;
      cell.dataset.value = "0";
      cell.setAttribute("role", "img");
      cell.addEventListener("click", () => onDrop(c));
      board.appendChild(cell);
    }
  }
  const cols = $("columns");
  const bars = $("bars");
  for (let c = 0; c < 7; c++) {
    const b = document.createElement("button");
    b.dataset.testid = "drop-" + c;
    b.textContent = String(c + 1);
    b.title = "Drop in column " + (c + 1) + " (key " + (c + 1) + ")";
    b.addEventListener("click", () => onDrop(c));
    cols.appendChild(b);
    const bar = document.createElement("div");
    bar.className = "bar";
    bar.dataset.testid = "value-" + c;
    bar.innerHTML = '<span class="num"></span><div class="fill" style="height:0"></div>';
    bars.appendChild(bar);
  }
}

/** What a screen reader says for a trace character. */
const CELL_NAMES: Record<string, string> = { "0": "empty", "8": "solid gray", "9": "cracked gray" };

function cellEl(i: number): HTMLElement {
  return $("board").children[i] as HTMLElement;
}

/** Shows a board string; optional highlighted cells get `cls`. */
export function showBoard(board: string, marks: number[] = [], cls = ""): void {
  for (let i = 0; i < 49; i++) {
    const el = cellEl(i);
    const v = board[i];
    el.dataset.value = v;
    el.textContent = v >= "1" && v <= "7" ? v : "";
    el.setAttribute("aria-label", `row ${Math.floor(i / 7) + 1}, column ${(i % 7) + 1}: ${CELL_NAMES[v] ?? v}`);
    el.className = "cell";
  }
  for (const i of marks) cellEl(i).classList.add(cls);
  for (let c = 0; c < 7; c++) {
    ($("columns").children[c] as HTMLElement).classList.toggle("full", board[c] !== "0");
  }
}

/** Shows one animation frame (the board before it is `prev`). */
export async function showFrame(prev: string, f: Frame, wait: () => Promise<void>): Promise<void> {
  const chain = $("chain");
  if (f.kind === "drop") {
    showBoard(f.board, f.popped, "landed");
  } else if (f.kind === "pop") {
    chain.textContent = f.depth > 1 ? "Chain ×" + f.depth : "Pop!";
    showBoard(prev, f.popped, "pop");
    await wait();
    showBoard(f.board, f.changed, "changed");
  } else if (f.kind === "rise") {
    chain.textContent = "Level up!";
    showBoard(f.board);
  } else {
    showBoard(f.board);
  }
  await wait();
}

/** Shows score, level, next disc, drops to the rise, game over. */
export function showStatus(s: StateView, moves: number): void {
  $("score").textContent = String(s.score);
  $("level").textContent = String(s.level);
  $("moves-remaining").textContent = String(s.movesRemaining);
  const next = $("next-disc");
  next.textContent = s.next === null ? "–" : String(s.next);
  next.className = "disc small" + (s.next === null ? "" : " v" + s.next);
  next.dataset.value = s.next === null ? "" : String(s.next);
  $("game-over").hidden = !s.gameOver;
  $("board").dataset.moves = String(moves);
  const pips = $("rise-pips");
  pips.innerHTML = "";
  for (let k = 0; k < 5; k++) {
    const p = document.createElement("span");
    if (k >= s.movesRemaining) p.className = "used";
    pips.appendChild(p);
  }
}

/** Clears the value bars. */
export function clearBars(): void {
  for (let c = 0; c < 7; c++) {
    const bar = $("bars").children[c] as HTMLElement;
    bar.className = "bar";
    delete bar.dataset.value;
    delete bar.dataset.bits;
    bar.removeAttribute("title");
    bar.querySelector(".num")!.textContent = "";
    (bar.querySelector(".fill") as HTMLElement).style.height = "0";
  }
}

/** Shows per-column values as bars; the best column is marked. */
export function showBars(rec: DecideRecord): void {
  const vals = rec.valuesDecimal;
  const legal = vals.filter((v): v is number => v !== null);
  const lo = Math.min(...legal);
  const hi = Math.max(...legal);
  // Enough decimals that different values get different labels (up to 3:
  // "10.2k" for every column said nothing of their differences).
  const distinct = new Set(legal).size;
  let digits = 1;
  while (digits < 3 && new Set(legal.map((v) => compact(v, digits))).size < distinct) digits++;
  for (let c = 0; c < 7; c++) {
    const bar = $("bars").children[c] as HTMLElement;
    const v = vals[c];
    const num = bar.querySelector(".num")!;
    const fill = bar.querySelector(".fill") as HTMLElement;
    bar.className = "bar" + (v === null ? " illegal" : "") + (rec.action === c ? " best" : "");
    if (v === null) {
      bar.dataset.value = "";
      bar.dataset.bits = "";
      num.textContent = "—";
      bar.title = `column ${c + 1}: illegal (full)`;
      fill.style.height = "0";
    } else {
      bar.dataset.value = String(v);
      bar.dataset.bits = rec.values[c] ?? "";
      num.textContent = (rec.action === c ? "★ " : "") + compact(v, digits);
      bar.title = `column ${c + 1}: ${v}`;
      const frac = hi > lo ? (v - lo) / (hi - lo) : 1;
      fill.style.height = Math.round(8 + 72 * frac) + "px";
    }
  }
}

/** `v` in few characters: millions with `digits` + 1 decimals, thousands
 * (from 10,000) with `digits` decimals, else `digits` − 1 decimals. */
function compact(v: number, digits: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return (v / 1e6).toFixed(digits + 1) + "M";
  if (a >= 1e4) return (v / 1e3).toFixed(digits) + "k";
  return v.toFixed(digits - 1);
}
