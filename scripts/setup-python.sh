#!/usr/bin/env bash
# Prerequisites of the Python package's tests (scripts/test-python.sh): a fresh
# virtual environment python/.venv (git-ignored) with maturin, the test
# dependencies (pytest, numpy, gymnasium, pandas, ray) and the drop7 wheel,
# built once here from python/ (abi3, Python >= 3.9). Idempotent: reuses the
# venv, reinstalls the freshly built wheel.
# Usage: scripts/setup-python.sh   (run by .ci/run as root on a fresh Debian machine)
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1 || ! "$PY" -m venv --help >/dev/null 2>&1; then
  # A Debian python3 without venv/pip support.
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
  PY=python3
fi
"$PY" -c 'import sys; assert sys.version_info >= (3, 9), sys.version' \
  || { echo "setup-python: Python >= 3.9 needed" >&2; exit 1; }

VENV=python/.venv
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q "maturin>=1.5,<2" pytest numpy gymnasium pandas ray

# Build the wheel once (release profile) and install it with its dependencies.
rm -rf target/wheels/drop7-*.whl
"$VENV/bin/maturin" build --release --manifest-path python/Cargo.toml --out target/wheels --quiet
"$VENV/bin/python" -m pip install -q --force-reinstall --no-deps target/wheels/drop7-*.whl
"$VENV/bin/python" -m pip install -q target/wheels/drop7-*.whl
"$VENV/bin/python" -c 'import drop7, sys; print("setup-python: drop7", drop7.__version__, "on Python", sys.version.split()[0])'
