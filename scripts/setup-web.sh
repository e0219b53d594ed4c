#!/usr/bin/env bash
# Installs what the web page's build and tests need (run as root on Debian; idempotent):
# Debian chromium (the browser tests; never a Playwright browser download), Node and npm,
# the wasm32 target, wasm-bindgen-cli at the version web/wasm pins, and web/node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# Node.js and npm: the machine's own when present (never replaced by Debian's).
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
rustup target add wasm32-unknown-unknown

want=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' web/wasm/Cargo.toml)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  # Once per machine. A debug build: about 1 minute on 2 cores against about
  # 5 for a release one, and it rewrites the page's small .wasm in about a
  # second, byte for byte as a release build does (the staleness check of
  # scripts/test-web.sh compares the result with the committed web/dist).
  cargo install wasm-bindgen-cli --version "$want" --locked --debug
fi

(cd web && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
echo "setup-web: chromium $(chromium --version 2>/dev/null | awk '{print $2}'), node $(node --version), wasm-bindgen $want"
