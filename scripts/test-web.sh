#!/usr/bin/env bash
# The web page's tests (after scripts/setup-web.sh):
#  1. rebuild web/dist (scripts/build-web.sh) and fail if the committed assets were stale;
#  2. golden trajectories and search roots through the WebAssembly build in Node (0 mismatches);
#  3. the page in headless Chromium against `drop7 serve` (web/tests/browser.test.mjs);
#     screenshots in web/test-results/.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== build-web (staleness check)"
bash scripts/build-web.sh
if [ -n "$(git status --porcelain --untracked-files=all -- web/dist)" ]; then
  git status --short -- web/dist >&2
  echo "error: the committed web/dist is stale: rebuilt by scripts/build-web.sh; commit web/dist" >&2
  exit 1
fi

echo "== wasm parity (node)"
(cd web && node --test --test-reporter=spec tests/golden.test.mjs)

echo "== browser (headless chromium)"
. scripts/drop7-bin.sh
(cd web && node --test --test-reporter=spec tests/browser.test.mjs)
