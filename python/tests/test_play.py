"""drop7.play: the records of `drop7 play --out`, whatever the thread count."""

import json

import pytest

# Wall-clock fields differ between runs by design.
WALL = {"wallMs", "decisionMsP50", "decisionMsP95", "decisionMsP99"}

import drop7


def cli_records(cli, tmp_path, policy, seed_start, games, *extra):
    out = tmp_path / f"{policy.replace(':', '_')}.jsonl"
    cli("play", "--policy", policy, "--seed-start", str(seed_start), "--games", str(games),
        "--out", str(out), *extra)
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("policy,games,extra", [
    ("center", 300, {}),
    ("random", 300, {}),
    ("random", 100, {"driver": "stream"}),
    ("fair:d2s3", 6, {}),
])
def test_play_equals_cli(cli, tmp_path, policy, games, extra):
    args = ["--driver", extra["driver"]] if "driver" in extra else []
    want = cli_records(cli, tmp_path, policy, 0xFFFFFF00, games, *args)
    seeds = [(0xFFFFFF00 + i) % 2**32 for i in range(games)]
    for threads in (1, 2, 3):
        got = drop7.play(policy, seeds, threads=threads, **extra)
        # The CLI's records also carry the cohort's self-describing fields
        # (run identity, wall clock, hash); the game's own fields must match.
        assert got == [{k: (g[k] if k in WALL else w[k]) for k in g} for g, w in zip(got, want)]
        assert len(got) == len(want)
    assert all(list(g) == [k for k in w if k in g] for g, w in zip(got, want))  # key order


def test_frame_and_arbitrary_seeds():
    df = drop7.play("center", [5, 1, 9], as_frame=True)
    assert list(df["seed"]) == ["0x00000005", "0x00000001", "0x00000009"]
    assert df["score"].dtype.kind == "i"
    one = drop7.play("center", [1])
    assert one[0] == drop7.play("center", range(1, 4))[0]
    capped = drop7.play("random", range(3), max_moves=5)
    assert all(r["moves"] == 5 and r["censored"] and r["terminalReason"] == "move-cap" for r in capped)


def test_bad_input():
    with pytest.raises(ValueError, match="unknown policy"):
        drop7.play("greedy-ish", range(3))
    with pytest.raises(ValueError, match="fair"):
        drop7.play("fair:d9s5", range(3))
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
    assert drop7.play("center", []) == []
