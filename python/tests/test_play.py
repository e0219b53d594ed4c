"""drop7.play: the records of `drop7 play --out`, field by field, whatever the thread count."""

import json
import warnings

import pytest

import drop7

# Fields that may differ between the CLI's records and the package's: the
# wall clock, and the engine version string. Everything else must be equal.
WALL = {"wallMs", "decisionMsP50", "decisionMsP95", "decisionMsP99", "engineVersion"}
START = 0xFFFFFF00  # the cohort wraps past 2**32 - 1


def cli_records(cli, tmp_path, policy, seed_start, games, *extra):
    out = tmp_path / f"{policy.replace(':', '_')}.jsonl"
    # One thread: a fair run with fewer games than cores would split its
    # decisions (search counters of a split decision vary from run to run).
    cli("play", "--policy", policy, "--seed-start", str(seed_start), "--games", str(games),
        "--threads", "1", "--out", str(out), "--force", *extra)
    return [json.loads(line) for line in out.read_text().splitlines()]


def same_records(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert list(g) == list(w), "the same keys in the same order"
        assert {k: v for k, v in g.items() if k not in WALL} == {
            k: v for k, v in w.items() if k not in WALL
        }
        for k in WALL:  # present on both sides, real values where the CLI has them
            assert (g[k] is None) == (w[k] is None), k


@pytest.mark.parametrize("policy,games,kwargs,args", [
    ("center", 300, {}, []),
    ("random", 300, {}, []),
    ("random", 100, {"driver": "stream"}, ["--driver", "stream"]),
    ("greedy", 30, {}, []),
    ("fair:d2s3", 6, {}, []),
    ("fair:d2s3", 4, {"table": "dm:1024", "max_work": 400, "max_moves": 30},
     ["--table", "dm:1024", "--max-work", "400", "--max-moves", "30"]),
])
def test_play_equals_cli(cli, tmp_path, policy, games, kwargs, args):
    want = cli_records(cli, tmp_path, policy, START, games, *args)
    seeds = [(START + i) % 2**32 for i in range(games)]
    for threads in (1, 2, 3):
        got = drop7.play(policy, seeds, threads=threads, **kwargs)
        same_records(got, want)
    r = got[0]
    assert (r["cohortSeedStart"], r["cohortGames"]) == (f"0x{START:08x}", games)
    assert r["ruleset"] == "drop7-hardcore-5-v1" and len(r["trajectorySha256"]) == 64
    if policy.startswith("fair"):
        assert r["work"] > 0 and r["nodes"] > 0 and r["decisionMsP50"] is not None
        assert r["table"] == kwargs.get("table", "sa:65536:4")
    else:
        assert "work" not in r and "table" not in r and r["decisionMsP50"] is None


def test_arbitrary_seeds_have_no_cohort(cli, tmp_path):
    """Seeds that are not consecutive: the game fields are each seed's own
    CLI record; the cohort fields are absent (there is no cohort range)."""
    got = drop7.play("fair:d1s2", [9, 3], threads=2)
    for r, seed in zip(got, (9, 3)):
        (want,) = cli_records(cli, tmp_path, "fair:d1s2", seed, 1)
        del want["cohortSeedStart"], want["cohortGames"]
        same_records([r], [want])


def test_frame_without_pandas_fails_before_playing(monkeypatch):
    """as_frame=True without pandas is an ImportError before any game is
    played (not after a whole cohort)."""
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)

    def no_games(*args):
        raise AssertionError("played before checking for pandas")

    monkeypatch.setattr(drop7._drop7, "play_json", no_games)
    with pytest.raises(ImportError, match="needs pandas"):
        drop7.play("center", [1], as_frame=True)


def test_frame_and_arbitrary_seeds():
    df = drop7.play("center", [5, 1, 9], as_frame=True)
    assert list(df["seed"]) == ["0x00000005", "0x00000001", "0x00000009"]
    assert df["score"].dtype.kind == "i"
    one = drop7.play("center", [1])
    two = drop7.play("center", range(1, 4))[0]
    assert {k: v for k, v in one[0].items() if k not in WALL | {"cohortGames"}} == {
        k: v for k, v in two.items() if k not in WALL | {"cohortGames"}
    }
    capped = drop7.play("random", range(3), max_moves=5)
    assert all(r["moves"] == 5 and r["censored"] and r["terminalReason"] == "move-cap" for r in capped)
    assert all(r["maxMoves"] == 5 for r in capped)


def test_bad_input():
    with pytest.raises(ValueError, match="unknown policy"):
        drop7.play("greedy-ish", range(3))
    with pytest.raises(ValueError, match="fair"):
        drop7.play("fair:d9s5", range(3))
    with pytest.raises(ValueError, match="CLI only"):
        drop7.play("d7p:drop7 d7p", range(3))
    with pytest.raises(ValueError, match="table"):
        drop7.play("fair:d1s1", range(3), table="sa:1000")
    with pytest.raises(ValueError, match=r"seeds\[1\]"):
        drop7.play("center", [1, -2])
    with pytest.raises(TypeError):
        drop7.play("center", 5)
    with pytest.raises(TypeError):
        drop7.play("center", "123")
    with pytest.raises(ValueError, match="driver"):
        drop7.play("center", [1], driver="x")
    with pytest.raises(ValueError, match="threads"):
        drop7.play("center", [1], threads=-1)
    with pytest.raises(ValueError, match="max_moves"):
        drop7.play("center", [1], max_moves=0)
    assert drop7.play("center", []) == []


def test_search_options_of_a_policy_that_does_not_search_warn():
    """As `drop7 play` notes it: table / max_work with center, random or
    greedy are ignored with a UserWarning; the records are unchanged."""
    plain = drop7.play("center", [1, 2])
    with pytest.warns(UserWarning, match="table applies to fair policies only: ignored for center"):
        got = drop7.play("center", [1, 2], table="sa:1024:4")
    same_records(got, plain)
    with pytest.warns(UserWarning, match="max_work applies to fair policies only: ignored for greedy"):
        drop7.play("greedy", [1], max_work=100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drop7.play("fair:d1s1", [1], table="sa:1024:4", max_work=100, max_moves=5)
        drop7.play("random", [1])
    # A bad table is an error alone, not a note that it is ignored first.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="table"):
            drop7.play("center", [1], table="bogus")


def test_a_budget_too_small_for_the_opening_decision_warns():
    """As `drop7 play` warns of it: such a fair run plays the fallback
    column; the warning points at the caller's line."""
    with pytest.warns(UserWarning, match="max_work 0 lets no search iteration complete") as w:
        got = drop7.play("fair:d1s1", [1], max_work=0, max_moves=5)
    assert w[0].filename == __file__
    center = drop7.play("center", [1], max_moves=5)
    assert [r["trajectorySha256"] for r in got] == [r["trajectorySha256"] for r in center]


def test_ctrl_c_stops_a_long_run():
    """The games run without the GIL; Ctrl-C (here: interrupt_main) stops
    the run within a move or so and raises KeyboardInterrupt."""
    import _thread
    import threading
    import time

    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        drop7.play("fair:d3s5", range(10_000), threads=1)
    assert time.perf_counter() - t0 < 30
    timer.join()


def test_records_that_cannot_fit_are_a_memory_error():
    """The seeds' records are reserved before the first game: a cohort far
    beyond any memory is a MemoryError naming it, not an abort of Python."""
    with pytest.raises(MemoryError, match=r"play: the records of 1099511627776 games do not fit in memory"):
        drop7.play("center", range(2**40), threads=1)
    # Of a generator (no len): found while its seeds are read.
    with pytest.raises(MemoryError, match=r"play: the records of more than \d+ games do not fit"):
        drop7.play("center", (s % 2**32 for s in range(2**40)), threads=1)
    # The interpreter is fine, and so is the next run.
    assert len(drop7.play("center", range(1, 4), threads=1)) == 3


def test_threads_takes_any_integer_type():
    np = pytest.importorskip("numpy")
    want = drop7.play("center", [1, 2], threads=1)
    for threads in (np.int64(2), np.uint8(1), 2):
        got = drop7.play("center", [1, 2], threads=threads)
        assert [r["score"] for r in got] == [r["score"] for r in want]
    with pytest.raises(TypeError, match="threads must be an integer, got float"):
        drop7.play("center", [1], threads=2.0)
    with pytest.raises(ValueError, match="threads must be 0-1024, got -1"):
        drop7.play("center", [1], threads=-1)
