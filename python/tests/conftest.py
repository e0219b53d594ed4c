"""Shared helpers: the repository's golden copies (testdata/, see its README)
and the `drop7` CLI binary the results are compared with."""

import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTDATA = REPO / "testdata"


def read_jsonl_gz(name):
    with gzip.open(TESTDATA / name, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def cli_path():
    """The `drop7` binary: $DROP7_BIN, else target/release/drop7 (built by
    `cargo test --release --workspace` or `cargo build --release`)."""
    p = Path(os.environ.get("DROP7_BIN", REPO / "target" / "release" / "drop7"))
    if not p.exists():
        raise RuntimeError(f"drop7 CLI not found at {p}: run `cargo build --release` first")
    return p


def run_cli(*args, stdin=None):
    r = subprocess.run(
        [str(cli_path()), *args], input=stdin, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, f"drop7 {' '.join(args)} failed: {r.stderr}"
    return r.stdout


@pytest.fixture(scope="session")
def cli():
    return run_cli
