#!/usr/bin/env bash
# The Python package's tests (python/tests, pytest) in the venv that
# scripts/setup-python.sh makes; they compare with the `drop7` CLI binary
# ($DROP7_BIN, or target/release/drop7 built here: scripts/drop7-bin.sh) and run a real local Ray.
# If the venv is missing, or the wheel is older than the sources it is built
# from, scripts/setup-python.sh runs first (in CI it has just run: no rebuild).
# Usage: scripts/test-python.sh
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=python/.venv
wheel=$(ls -t target/wheels/drop7-*.whl 2>/dev/null | head -n 1 || true)
stale=""
if [ -z "$wheel" ] || [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import drop7' 2>/dev/null; then
  stale="no venv with drop7 installed"
elif [ -n "$(find python/src python/drop7 python/Cargo.toml python/pyproject.toml crates/drop7/src Cargo.toml \
              -newer "$wheel" -type f -not -name '*.so' -not -path '*/__pycache__/*' -print -quit)" ]; then
  stale="sources newer than $wheel"
fi
if [ -n "$stale" ]; then
  echo "test-python: $stale: running scripts/setup-python.sh" >&2
  bash scripts/setup-python.sh
fi
. scripts/drop7-bin.sh
# From the repository root, so the installed wheel (not the source folder
# python/drop7) is imported; -rs lists any skipped test.
"$VENV/bin/python" -m pytest python/tests -q -rs -p no:cacheprovider
