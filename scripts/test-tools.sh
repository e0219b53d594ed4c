#!/usr/bin/env bash
# The by-hand parity tools on a small scale, so that they keep working:
# scripts/trace-diff against one golden trajectory file, and
# scripts/holdout-sweep (fast = reference search on positions from new seeds)
# at depth 2 on both gravity paths. Needs Python 3. Usage: scripts/test-tools.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q  # a no-op after `cargo test --release --workspace`
BIN="$PWD/target/release/drop7"
scripts/trace-diff "$BIN" testdata/trajectories-random.jsonl.gz
scripts/holdout-sweep "$BIN" --config d2s7 --positions 60 --policy fair:d1s3
scripts/holdout-sweep "$BIN" --config d2s5 --table lru:50 --positions 60 --gravity portable
# A mismatch or a bad argument must fail the run.
if scripts/holdout-sweep "$BIN" --config bogus >/dev/null 2>&1; then
  echo "FAIL: holdout-sweep accepted --config bogus"; exit 1
fi
echo "tools ok"
