"""examples/ray_cohort.py on a real local Ray cluster (ray.init() on this
machine): the records equal `drop7 play --out` for the same seeds."""

import json

# Wall-clock fields differ between runs by design (and the engine version
# string may differ between the CLI and the package).
WALL = {"wallMs", "decisionMsP50", "decisionMsP95", "decisionMsP99", "engineVersion"}
import subprocess
import sys
from pathlib import Path

import ray  # noqa: F401  (installed by scripts/setup-python.sh; a missing ray fails here)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ray_cohort.py"


def test_ray_cohort_equals_cli(cli, tmp_path):
    want_path, got_path = tmp_path / "cli.jsonl", tmp_path / "ray.jsonl"
    args = ["--policy", "random", "--seed-start", "0xFFFFFFF0", "--games", "500"]
    cli("play", *args, "--out", str(want_path))
    r = subprocess.run(
        [sys.executable, str(EXAMPLE), *args, "--shards", "7", "--out", str(got_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "500 games in 7 Ray tasks" in r.stderr and "error" not in r.stderr, r.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cli.jsonl", "ray.jsonl"]
    want = [json.loads(x) for x in want_path.read_text().splitlines()]
    got = [json.loads(x) for x in got_path.read_text().splitlines()]
    assert len(got) == len(want)
    for g, w in zip(got, want):  # every field, in the same order
        assert list(g) == list(w)
        assert {k: v for k, v in g.items() if k not in WALL} == {
            k: v for k, v in w.items() if k not in WALL
        }


def test_ray_cohort_bad_arguments_are_one_line_errors(tmp_path):
    """A bad policy, move cap or seed is an argparse error before Ray starts
    (a bad policy was a traceback from every Ray task; a seed of -1 or 2**32
    silently wrapped), and no output file is written."""
    out = tmp_path / "ray.jsonl"
    for extra, want in [
        (["--policy", "nope"], 'unknown policy "nope"'),
        (["--max-moves", "0"], "max_moves must be 1-4294967295, got 0"),
        (["--seed-start", "-1"], "--seed-start must be 0..0xffffffff"),
        (["--seed-start", "0x100000000"], "--seed-start must be 0..0xffffffff"),
        (["--shards", "-2"], "--shards must be 0"),
    ]:
        r = subprocess.run(
            [sys.executable, str(EXAMPLE), "--games", "3", *extra, "--out", str(out)],
            capture_output=True, text=True, timeout=120,
        )
        assert r.returncode == 2, (extra, r.stderr[-2000:])
        assert want in r.stderr and "Traceback" not in r.stderr, (extra, r.stderr[-2000:])
        assert not out.exists()


def test_ray_cohort_unwritable_out_is_refused_before_the_run(tmp_path):
    """An --out in a missing folder or naming a folder is a one-line error
    before any game is played (it was a traceback after the whole run), and
    no temporary file is left behind."""
    for out, extra, want in [
        (tmp_path / "nodir" / "x.jsonl", [], "cannot write a file there"),
        (tmp_path, ["--force"], "is a directory, not a file"),
        (tmp_path, [], "is a directory, not a file"),
    ]:
        r = subprocess.run(
            [sys.executable, str(EXAMPLE), "--games", "3", *extra, "--out", str(out)],
            capture_output=True, text=True, timeout=120,
        )
        assert r.returncode == 2, (out, r.stderr[-2000:])
        assert want in r.stderr and "Traceback" not in r.stderr, (out, r.stderr[-2000:])
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_ray_cohort_without_ray_is_a_one_line_error(tmp_path):
    """Without Ray the example names what is missing (and still checks its
    arguments first), rather than failing with an import traceback."""
    fake = tmp_path / "noray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(fake.parent)}
    out = tmp_path / "ray.jsonl"
    for extra, want in [
        ([], "Ray is not installed"),
        (["--policy", "nope"], 'unknown policy "nope"'),
    ]:
        r = subprocess.run(
            [sys.executable, str(EXAMPLE), "--games", "3", *extra, "--out", str(out)],
            capture_output=True, text=True, timeout=120, env=env,
        )
        assert r.returncode == 2, (extra, r.stderr[-2000:])
        assert want in r.stderr and "Traceback" not in r.stderr, (extra, r.stderr[-2000:])
        assert not out.exists()


def test_ray_cohort_keeps_an_existing_out_without_force(tmp_path):
    """As `drop7 play`: a non-empty --out is refused before Ray starts
    unless --force is given."""
    out = tmp_path / "ray.jsonl"
    out.write_text("precious\n")
    r = subprocess.run(
        [sys.executable, str(EXAMPLE), "--games", "3", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 2, r.stderr[-2000:]
    assert "exists and is not empty: add --force" in r.stderr and "Traceback" not in r.stderr
    assert out.read_text() == "precious\n"


def test_ray_cohort_refuses_an_out_that_is_not_a_regular_file(tmp_path):
    """A FIFO (or a device) --out is refused before Ray starts, with or
    without --force: the records are renamed over --out at the end, which
    would replace the FIFO or device node itself (an open of a FIFO could
    also block for ever)."""
    fifo = tmp_path / "fifo"
    __import__("os").mkfifo(fifo)
    for extra in ([], ["--force"]):
        r = subprocess.run(
            [sys.executable, str(EXAMPLE), "--games", "3", *extra, "--out", str(fifo)],
            capture_output=True, text=True, timeout=120,
        )
        assert r.returncode == 2, r.stderr[-2000:]
        assert "is not a regular file" in r.stderr and "Traceback" not in r.stderr
        assert fifo.is_fifo() and sorted(tmp_path.iterdir()) == [fifo]


def _fake_ray(tmp_path):
    """A stand-in `ray` module that runs the shards in this process; when the
    results are collected it writes the --out (RACE=write) or, as a `drop7
    play --out` starting meanwhile does, locks it and leaves it empty
    (RACE=lock; the lock is held until the script exits)."""
    fake = tmp_path / "fakeray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "import fcntl, os\n"
        "class _Task:\n"
        "    def __init__(self, fn): self.fn = fn\n"
        "    def remote(self, *a): return self.fn(*a)\n"
        "def remote(**_): return _Task\n"
        "def init(**_): pass\n"
        "def cluster_resources():\n"
        "    n = int(os.environ.get('FAKE_CPUS', '1'))\n"
        "    return {'CPU': float(n)} if n else {}\n"
        "def shutdown(): pass\n"
        "_held = []\n"
        "def get(results):\n"
        "    out = os.environ['RACE_OUT']\n"
        "    if os.environ['RACE'] == 'write':\n"
        "        with open(out, 'w') as f: f.write('precious\\n')\n"
        "    elif os.environ['RACE'] == 'none':\n"
        "        pass\n"
        "    elif os.environ['RACE'] == 'dangling':\n"
        "        os.symlink(out + '.nowhere', out)\n"
        "    else:\n"
        "        f = open(out, 'a'); fcntl.flock(f, fcntl.LOCK_EX); _held.append(f)\n"
        "    return results\n"
    )
    return fake.parent


def test_ray_cohort_keeps_an_out_written_during_the_run(tmp_path):
    """An --out that another process writes (or, empty, locks) while the
    cohort runs is not overwritten without --force: the records go to a new
    file beside it, named in a one-line error (exit 1), never over an earlier
    run's kept records."""
    out = tmp_path / "ray.jsonl"
    env = {**__import__("os").environ, "PYTHONPATH": str(_fake_ray(tmp_path)),
           "RACE_OUT": str(out), "RACE": "write"}
    args = [sys.executable, str(EXAMPLE), "--policy", "random", "--games", "3", "--out", str(out)]
    seeds = ["0x00000001", "0x00000002", "0x00000003"]

    def kept_files():
        return sorted(p for p in tmp_path.iterdir()
                      if p.name.startswith("ray.jsonl.") and p.suffix == ".jsonl")

    for run in range(2):  # the second conflict keeps the first one's records
        if run == 1:
            out.unlink()
        r = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 1, r.stderr[-2000:]
        assert "was written or locked by another process during the run (no --force) and is kept" \
            in r.stderr
        assert "Traceback" not in r.stderr
        assert out.read_text() == "precious\n"
        kept = kept_files()
        assert len(kept) == run + 1 and any(str(k) in r.stderr for k in kept), (kept, r.stderr)
        for k in kept:
            assert [json.loads(x)["seed"] for x in k.read_text().splitlines()] == seeds
    # An --out empty at the start that a `drop7 play` locks meanwhile: kept too.
    for k in kept_files():
        k.unlink()
    out.write_text("")
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**env, "RACE": "lock"})
    assert r.returncode == 1, r.stderr[-2000:]
    assert out.read_text() == "" and len(kept_files()) == 1, r.stderr
    # A new --out (the usual run): made, nothing else left, no error; an
    # empty --out nobody locks is replaced; no temporary file is left
    # behind; with --force a written --out is replaced.
    for k in kept_files():
        k.unlink()
    out.unlink()
    r = subprocess.run(args, capture_output=True, text=True, timeout=120,
                       env={**env, "RACE_OUT": str(tmp_path / "elsewhere"), "RACE": "write"})
    assert r.returncode == 0 and "error" not in r.stderr, r.stderr[-2000:]
    assert len(out.read_text().splitlines()) == 3
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    out.write_text("")
    r = subprocess.run(args, capture_output=True, text=True, timeout=120,
                       env={**env, "RACE_OUT": str(tmp_path / "elsewhere"), "RACE": "write"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(out.read_text().splitlines()) == 3
    out.write_text("")
    r = subprocess.run(args + ["--force"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(out.read_text().splitlines()) == 3
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert kept_files() == []
    # Even --force keeps an --out that a running drop7 play holds locked.
    out.write_text("")
    r = subprocess.run(args + ["--force"], capture_output=True, text=True, timeout=120,
                       env={**env, "RACE": "lock"})
    assert r.returncode == 1, r.stderr[-2000:]
    assert "is locked by another process" in r.stderr and "Traceback" not in r.stderr
    assert out.read_text() == "" and len(kept_files()) == 1, r.stderr
    # A dangling symlink made at --out during the run: kept, records beside it.
    for k in kept_files():
        k.unlink()
    out.unlink()
    r = subprocess.run(args, capture_output=True, text=True, timeout=120,
                       env={**env, "RACE": "dangling"})
    assert r.returncode == 1, r.stderr[-2000:]
    assert out.is_symlink() and "Traceback" not in r.stderr
    kept = kept_files()
    assert len(kept) == 1 and str(kept[0]) in r.stderr, r.stderr
    assert len(kept[0].read_text().splitlines()) == 3
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_ray_cohort_warns_of_a_cluster_without_cpus(tmp_path):
    """A cluster with no CPUs yet (an autoscaler's, before its first worker)
    is named in a warning, as the tasks then wait for one; the run still
    writes its records."""
    out = tmp_path / "ray.jsonl"
    env = {**__import__("os").environ, "PYTHONPATH": str(_fake_ray(tmp_path)),
           "RACE_OUT": str(out), "RACE": "none", "FAKE_CPUS": "0"}
    r = subprocess.run(
        [sys.executable, str(EXAMPLE), "--policy", "random", "--games", "3", "--out", str(out)],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "warning: the Ray cluster has no CPUs yet" in r.stderr, r.stderr
    assert [json.loads(x)["seed"] for x in out.read_text().splitlines()] == \
        ["0x00000001", "0x00000002", "0x00000003"]
