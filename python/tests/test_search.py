"""drop7.decide and drop7.leaf: bit-identical to the golden search and leaf
records (testdata/search.jsonl.gz, leaf.jsonl.gz) and to the CLI's
`drop7 decide` / `drop7 leaf`."""

import json
import struct

import numpy as np
import pytest

import drop7
from conftest import read_jsonl_gz


def bits(v):
    return None if v is None else struct.pack(">d", v).hex()


def test_decide_matches_golden_records():
    checked = 0
    for r in read_jsonl_gz("search.jsonl.gz"):
        c = r["config"]
        if c["depth"] >= 4 and c["strata"] >= 7:
            continue  # the slow d4s7 roots: the Rust search gate covers them
        cap = c["cacheCapacity"]
        d = drop7.decide(
            {"board": r["board"], "next": r["next"], "movesRemaining": r["movesRemaining"]},
            depth=c["depth"], strata=c["strata"],
            table=f"lru:{cap}" if cap else "none", max_work=c["maxWork"],
        )
        where = f"root {r['root']} {c['name']}"
        assert [bits(v) for v in d["values"]] == r["values"], where
        assert d["action"] == r["action"], where
        assert d["completed_depth"] == r["completedDepth"], where
        assert d["expected_scores"] == r["expectedScores"], where
        assert d["stats"]["work"] == r["work"] and d["stats"]["nodes"] == r["nodes"], where
        assert d["stats"]["cache_hits"] == r["cacheHits"], where
        checked += 1
    assert checked == 845


def test_decide_matches_the_cli(cli):
    roots = [r for r in read_jsonl_gz("search.jsonl.gz") if r["config"]["name"] == "d2s5"][:25]
    lines = "".join(
        json.dumps({"board": r["board"], "next": r["next"], "movesRemaining": r["movesRemaining"]}) + "\n"
        for r in roots
    )
    for args, kw in [(["--depth", "3", "--strata", "5"], dict(depth=3, strata=5)),
                     (["--depth", "2", "--strata", "7", "--table", "none"], dict(depth=2, strata=7, table="none"))]:
        out = [json.loads(x) for x in cli("decide", *args, stdin=lines).splitlines()]
        assert len(out) == len(roots)
        for r, want in zip(roots, out):
            d = drop7.decide({"board": r["board"], "next": r["next"], "movesRemaining": r["movesRemaining"]}, **kw)
            assert [bits(v) for v in d["values"]] == want["values"]
            assert d["action"] == want["action"]


def test_decide_threads_and_default_table(cli):
    """`threads` splits a decision: the values, action and completed depth of
    one thread (and of `drop7 decide --threads 2`). The default table is
    the CLI's for the depth (stats equal `drop7 decide` without --table)."""
    roots = [r for r in read_jsonl_gz("search.jsonl.gz") if r["config"]["name"] == "d2s5"][:6]
    lines = "".join(
        json.dumps({"board": r["board"], "next": r["next"], "movesRemaining": r["movesRemaining"]}) + "\n"
        for r in roots
    )
    two = [json.loads(x) for x in cli("decide", "--depth", "3", "--strata", "7", "--threads", "2",
                                      stdin=lines).splitlines()]
    deep = [json.loads(x) for x in cli("decide", "--depth", "5", "--strata", "1",
                                       stdin=lines).splitlines()]
    for r, want, want5 in zip(roots, two, deep):
        pos = {"board": r["board"], "next": r["next"], "movesRemaining": r["movesRemaining"]}
        one = drop7.decide(pos, depth=3, strata=7)
        split = drop7.decide(pos, depth=3, strata=7, threads=2)
        for d in (one, split):
            assert [bits(v) for v in d["values"]] == want["values"]
            assert d["action"] == want["action"]
            assert d["completed_depth"] == want["completedDepth"]
        d5 = drop7.decide(pos, depth=5, strata=1)
        assert d5["stats"]["work"] == want5["work"]
        assert d5["stats"]["cache_hits"] == want5["cacheHits"]
        assert d5 == drop7.decide(pos, depth=5, strata=1, table="sa:1048576:4")
    ok = roots[0]
    for bad in (0, 257, -1):
        with pytest.raises(ValueError, match="threads must be 1-256"):
            drop7.decide({"board": ok["board"], "next": ok["next"], "movesRemaining": ok["movesRemaining"]},
                         threads=bad)


def test_decide_on_a_game_and_game_over():
    g = drop7.Game(5)
    d = drop7.decide(g, depth=2, strata=3)
    assert d["action"] in g.legal_columns and len(d["values"]) == 7
    assert d == drop7.decide(g.position(), depth=2, strata=3)
    over = drop7.decide({"board": g.board_string, "next": 1, "movesRemaining": 5, "gameOver": True})
    assert over["action"] is None and over["values"] == [None] * 7


def test_game_over_line_without_next_as_the_cli(cli):
    """A game-over line as `drop7 trace` prints it after a blocked rise
    (movesRemaining 0, no next) is read as `drop7 leaf` / `decide` read it."""
    board = "0" * 42 + "8" * 7
    line = {"board": board, "movesRemaining": 0, "gameOver": True}
    want = [json.loads(x) for x in cli("leaf", stdin=json.dumps(line) + "\n").splitlines()]
    assert [bits(drop7.leaf(line))] == [w["bits"] for w in want]
    assert drop7.leaf(line) == -2500000.0
    assert drop7.decide(line, depth=1, strata=1)["action"] is None
    # Without gameOver, next and movesRemaining 1-5 are still required.
    with pytest.raises(ValueError, match='missing key "next"'):
        drop7.leaf({"board": board, "movesRemaining": 3})
    with pytest.raises(ValueError, match="movesRemaining must be 1-5, got 0"):
        drop7.leaf({"board": board, "next": 3, "movesRemaining": 0, "gameOver": False})
    with pytest.raises(ValueError, match="movesRemaining must be 0-5, got 6"):
        drop7.leaf(dict(line, movesRemaining=6))


def test_leaf_matches_golden_records(cli):
    recs = read_jsonl_gz("leaf.jsonl.gz")
    for r in recs:
        assert bits(drop7.leaf(r)) == r["bits"], r.get("provenance")
    lines = "".join(json.dumps({k: r[k] for k in ("board", "next", "movesRemaining", "gameOver")}) + "\n"
                    for r in recs[:200])
    out = [json.loads(x) for x in cli("leaf", stdin=lines).splitlines()]
    assert [o["bits"] for o in out] == [bits(drop7.leaf(r)) for r in recs[:200]]


def test_bad_positions_and_options():
    ok = {"board": "0" * 42 + "8" * 7, "next": 3, "movesRemaining": 5}
    with pytest.raises(ValueError, match="depth must be 1-8"):
        drop7.decide(ok, depth=9)
    with pytest.raises(ValueError, match="strata must be 1-32"):
        drop7.decide(ok, strata=0)
    with pytest.raises(ValueError, match="table"):
        drop7.decide(ok, table="dm:1000")
    with pytest.raises(ValueError, match="missing key"):
        drop7.leaf({"board": ok["board"], "next": 3})
    with pytest.raises(ValueError, match="next must be 1-7"):
        drop7.leaf(dict(ok, next=9))
    with pytest.raises(ValueError, match="movesRemaining must be 1-5"):
        drop7.leaf(dict(ok, movesRemaining=0))
    with pytest.raises(ValueError, match="board"):
        drop7.leaf(dict(ok, board="x" * 49))
    with pytest.raises(TypeError, match="integer dtype"):
        drop7.leaf(dict(ok, board=np.zeros((7, 7))))
    with pytest.raises(TypeError):
        drop7.decide(42)


@pytest.mark.parametrize("call", [
    "drop7.decide(drop7.Game(1), depth=8, strata=32)",
    "drop7.play('fair:d4s7', range(1, 50), threads=2)",
    # One decision of hours, on one thread and split over two: cut short.
    "drop7.play('fair:d8s7', [1], threads=1)",
    "drop7.play('fair:d8s7', [1], threads=2)",
])
def test_sigint_interrupts_long_calls(call):
    """A real SIGINT (Ctrl-C) to a process busy in a long call raises
    KeyboardInterrupt within a fraction of a second."""
    import signal
    import subprocess
    import sys
    import time

    code = (
        "import sys, drop7\n"
        "print('ready', flush=True)\n"
        "try:\n"
        f"    {call}\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(3)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        t0 = time.perf_counter()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        assert time.perf_counter() - t0 < 10
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 3
    assert out.strip() == "interrupted"


@pytest.mark.parametrize("call", [
    "drop7.decide(drop7.Game(1), depth=2, strata=3, table='sa:67108864:4')",
    "drop7.decide(drop7.Game(1), depth=2, strata=3, table='lru:67108864')",
    "drop7.play('fair:d2s3', [1, 2], table='dm:67108864', threads=2)",
])
def test_table_too_large_for_memory_raises(call):
    """A table larger than the process may allocate (address space limited
    to 500 MB, as `ulimit -v 500000`) raises MemoryError naming the table and
    its size; the interpreter lives on."""
    import subprocess
    import sys

    code = (
        "import resource, drop7\n"
        "resource.setrlimit(resource.RLIMIT_AS, (500_000 * 1024, 500_000 * 1024))\n"
        "try:\n"
        f"    {call}\n"
        "except MemoryError as e:\n"
        "    print('MemoryError', e, flush=True)\n"
        "print(drop7.decide(drop7.Game(1), depth=1, strata=1, table='sa:1024')['action'])\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    first, second = p.stdout.splitlines()
    assert first.startswith("MemoryError table: transposition table "), first
    assert "MiB: cannot allocate it" in first, first
    # The advice names the Python arguments, not the CLI's flags.
    assert "try a smaller table= or fewer threads=" in first and "--" not in first, first
    assert second.isdigit(), p.stdout
