"""Benchmark: the vector environment against `drop7 play`, side by side.

Measures, in one run on this machine:
  * Drop7VectorEnv moves/s: batch --batch (1,024), one thread, random legal
    actions drawn with NumPy every step (their cost included);
  * `drop7 play --policy random --threads 1` moves/s (the same engine with
    no Python at all; wall time of the process);
  * the single-env cost: Drop7Env.step() and Game.step() in microseconds.

    python examples/bench_env.py [--drop7 target/release/drop7] [--seconds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np

import drop7

REPO = Path(__file__).resolve().parents[2]


def vector_moves_per_s(batch: int, seconds: float) -> float:
    env = drop7.Drop7VectorEnv(num_envs=batch)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=1)
    moves, steps, resets = 0, 0, 0
    t0 = time.perf_counter()
    while True:
        mask = info["action_mask"]
        # A uniformly random legal column per board (an ended board's action is ignored).
        actions = (rng.random(mask.shape) * mask).argmax(axis=1)
        _, _, term, trunc, info = env.step(actions)
        # Boards that ended on the previous step autoreset now and play no move.
        moves += batch - resets
        resets = int(np.count_nonzero(term | trunc))
        steps += 1
        if steps % 64 == 0 and time.perf_counter() - t0 > seconds:
            break
    return moves / (time.perf_counter() - t0)


def cli_moves_per_s(exe: str, games: int) -> tuple:
    t0 = time.perf_counter()
    out = subprocess.run(
        [exe, "play", "--policy", "random", "--threads", "1", "--games", str(games)],
        capture_output=True, text=True, check=True,
    ).stdout
    secs = time.perf_counter() - t0
    total = next(int(line.split("total")[1]) for line in out.splitlines() if line.startswith("moves"))
    return total / secs, total


def single_step_us(n: int) -> tuple:
    env = drop7.Drop7Env()
    _, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    t = 0.0
    steps = 0
    while steps < n:
        legal = np.flatnonzero(info["action_mask"])
        a = int(legal[rng.integers(len(legal))])
        t0 = time.perf_counter()
        _, _, term, trunc, info = env.step(a)
        t += time.perf_counter() - t0
        steps += 1
        if term or trunc:
            _, info = env.reset()
    g_time, g_steps = 0.0, 0
    g = drop7.Game(1)
    while g_steps < n:
        cols = g.legal_columns
        c = cols[g_steps % len(cols)]
        t0 = time.perf_counter()
        g.step(c)
        g_time += time.perf_counter() - t0
        g_steps += 1
        if g.game_over:
            g = drop7.Game(g.seed + 1)
    return 1e6 * t / steps, 1e6 * g_time / g_steps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--drop7", default=None,
                   help="the drop7 binary [default: the checkout's target/release/drop7 "
                        "($CARGO_TARGET_DIR/release/drop7), else drop7 on PATH]")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--cli-games", type=int, default=100_000)
    a = p.parse_args()
    if a.drop7 is None:
        target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
        built = target / "release" / "drop7"
        a.drop7 = str(built) if built.is_file() else shutil.which("drop7")
        if a.drop7 is None:
            p.error(f"no drop7 binary at {built} nor on PATH: build it "
                    "(cargo build --release) or pass --drop7 PATH")
    elif not (Path(a.drop7).is_file() or shutil.which(a.drop7)):
        p.error(f"--drop7 {a.drop7}: no such program")
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    rounds = []
    for _ in range(3):  # interleaved, best of three each
        vec = vector_moves_per_s(a.batch, a.seconds)
        cli, total = cli_moves_per_s(a.drop7, a.cli_games)
        rounds.append((vec, cli))
    vec = max(r[0] for r in rounds)
    cli = max(r[1] for r in rounds)
    env_us, game_us = single_step_us(20_000)
    print(f"Drop7VectorEnv batch {a.batch}, 1 thread, NumPy random legal actions: {vec / 1e6:.2f} M moves/s")
    print(f"drop7 play --policy random --threads 1 ({total} moves):            {cli / 1e6:.2f} M moves/s")
    print(f"ratio vector env / CLI: {vec / cli:.2f}x")
    print(f"Drop7Env.step(): {env_us:.2f} us   Game.step(): {game_us:.2f} us")


if __name__ == "__main__":
    main()
