#!/usr/bin/env bash
# The Python package's tests (python/tests, pytest) in the venv that
# scripts/setup-python.sh made; they compare with the `drop7` CLI binary
# (target/release/drop7, built here if missing) and run a real local Ray.
# Usage: scripts/test-python.sh   (after scripts/setup-python.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=python/.venv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import drop7' 2>/dev/null; then
  echo "test-python: no python/.venv with drop7 installed; run scripts/setup-python.sh first" >&2
  exit 1
fi
cargo build --release -p drop7-cli --quiet
# From the repository root, so the installed wheel (not the source folder
# python/drop7) is imported; -rs lists any skipped test.
DROP7_BIN="$PWD/target/release/drop7" "$VENV/bin/python" -m pytest python/tests -q -rs -p no:cacheprovider
