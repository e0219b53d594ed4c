#!/usr/bin/env bash
# The by-hand parity tools on a small scale, so that they keep working:
# scripts/trace-diff against one golden trajectory file, and
# scripts/holdout-sweep (fast = reference search on positions from new seeds)
# at depth 2 on both gravity paths. Needs Python 3. Usage: scripts/test-tools.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/drop7-bin.sh
BIN="$DROP7_BIN"
scripts/trace-diff "$BIN" testdata/trajectories-random.jsonl.gz
scripts/holdout-sweep "$BIN" --config d2s7 --positions 60 --policy fair:d1s3
scripts/holdout-sweep "$BIN" --config d2s5 --table lru:50 --positions 60 --gravity portable
# A bad argument fails the run (exit 2); so does a mismatch (exit 1): here a
# "binary" whose reference search answers with a changed work count.
set +e
scripts/holdout-sweep "$BIN" --config bogus >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || { echo "FAIL: holdout-sweep --config bogus exited $rc, not 2"; exit 1; }
FAKE="$(mktemp)"
trap 'rm -f "$FAKE"' EXIT
cat > "$FAKE" <<FAKE
#!/bin/sh
case " \$* " in
  *" reference "*) "$BIN" "\$@" | sed 's/"work":/"work":1/' ;;
  *) exec "$BIN" "\$@" ;;
esac
FAKE
chmod +x "$FAKE"
scripts/holdout-sweep "$FAKE" --config d1s3 --positions 5 >/dev/null 2>&1; rc=$?
[ "$rc" = 1 ] || { echo "FAIL: holdout-sweep missed a mismatch (exit $rc, not 1)"; exit 1; }
set -e
echo "tools ok"
