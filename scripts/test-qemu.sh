#!/usr/bin/env bash
# No SIGILL, proven: the engine tests and the CLI run on an emulated CPU
# without BMI2 (qemu-x86_64 -cpu Westmere). Test binaries are started under
# the emulator (run_test below); the CLI tests prefix the `drop7` binary
# they start with $DROP7_TEST_RUNNER (a program started by an emulated one
# would run natively). Shows: `auto` picks the portable path, `--gravity bmi2`
# is refused with a clear error, and the records are identical to a native
# run's. A short subset (under a minute after the README's test command); needs scripts/setup-qemu.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -m)" != x86_64 ]; then
  echo "not an x86-64 host: nothing to emulate"
  exit 0
fi
command -v qemu-x86_64 >/dev/null || { echo "qemu-x86_64 missing: run scripts/setup-qemu.sh" >&2; exit 1; }
RUNNER="qemu-x86_64 -cpu Westmere"
export DROP7_TEST_RUNNER="$RUNNER"

# The test binaries run here are those of the README's test command
# (`cargo test --release --workspace`), started under the emulator directly,
# from their package's folder as cargo does. `--no-run` with that command's
# selection builds nothing after it and names them; a narrower selection
# (`-p drop7`, `--lib`, `--test NAME`) resolves other dependency features and
# rebuilds for minutes.
tests=$(cargo test --release --workspace --no-run --message-format=json-render-diagnostics | python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["kind"][0], m["target"]["name"], os.path.dirname(m["manifest_path"]), m["executable"])
')
# Runs the test binary of the package in folder $1 whose kind and name are $2 and $3.
run_test() {
  local found
  found=$(awk -v dir="$PWD/$1" -v kind="$2" -v name="$3" '$1 == kind && $2 == name && $3 == dir { print $4 }' <<<"$tests")
  [ -n "$found" ] || { echo "test-qemu: no $2 test binary $3 in $1" >&2; exit 1; }
  echo "-- $1: $2 $3"
  (cd "$1" && $RUNNER "$found")
}
echo "== engine tests under $RUNNER"
run_test crates/drop7 lib drop7
run_test crates/drop7 test fixtures_gate
run_test crates/drop7 test fuzz_replay
echo "== CLI tests under $RUNNER"
run_test crates/drop7-cli test hygiene

echo "== the drop7 binary under $RUNNER"
. scripts/drop7-bin.sh
bin=$DROP7_BIN
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$RUNNER $bin play --games 50 --gravity auto --out "$tmp/emulated.jsonl" >"$tmp/summary.txt"
grep -q "(gravity portable)" "$tmp/summary.txt" || { cat "$tmp/summary.txt"; echo "auto did not pick portable" >&2; exit 1; }
if $RUNNER $bin play --games 1 --gravity bmi2 >/dev/null 2>"$tmp/err.txt"; then
  echo "--gravity bmi2 was not refused" >&2; exit 1
fi
grep -qx "error: --gravity bmi2 requested but this CPU has no BMI2" "$tmp/err.txt"
$bin play --games 50 --gravity auto --out "$tmp/native.jsonl" >/dev/null
# Records agree in every field but the wall-clock ones (wallMs, decisionMs...).
strip() { python3 -c 'import json,sys
for l in sys.stdin:
    r = json.loads(l)
    print(json.dumps({k: v for k, v in r.items() if k != "wallMs" and not k.startswith("decisionMs")}, sort_keys=True))' <"$1"; }
cmp <(strip "$tmp/emulated.jsonl") <(strip "$tmp/native.jsonl")
$RUNNER $bin trace --games 5 --policy fair:d2s3 >"$tmp/emulated.trace"
$bin trace --games 5 --policy fair:d2s3 >"$tmp/native.trace"
cmp "$tmp/emulated.trace" "$tmp/native.trace"
echo "auto = portable, bmi2 refused, records identical to native ($(grep -o 'gravity [a-z0-9]*' <(${bin} play --games 1)) natively)"
