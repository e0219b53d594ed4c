#!/usr/bin/env bash
# Rebuilds the web page's built assets in web/dist (committed, embedded by `drop7 serve`):
#   web/wasm  --cargo (wasm32-unknown-unknown, release)-->  --wasm-bindgen --target web-->  web/dist/pkg/
#   web/src/*.ts  --tsc-->  web/dist/*.js ;  web/static/*  -->  web/dist/
# Deterministic: fixed profile settings, paths remapped, pinned wasm-bindgen and typescript.
# Needs what scripts/setup-web.sh installs. Usage: scripts/build-web.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

want=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' web/wasm/Cargo.toml)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  echo "error: wasm-bindgen-cli $want is needed (found: ${have:-none}); run scripts/setup-web.sh" >&2
  exit 1
fi
if [ ! -x web/node_modules/.bin/tsc ]; then
  echo "error: web/node_modules is missing; run (cd web && npm ci)" >&2
  exit 1
fi

export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
  CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_PANIC=abort
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="--remap-path-prefix=$root=/drop7 --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo"
cargo build --release --locked --target wasm32-unknown-unknown -p drop7-web

# A rebuilt file whose bytes did not change gets its old modification time
# back, so that `cargo build` does not rebuild the CLI, which embeds web/dist
# (a fat-LTO build: minutes), after a rebuild that changed nothing.
before=target/web-dist.before
rm -rf "$before"
mkdir -p target
if [ -d web/dist ]; then cp -a web/dist "$before"; fi
rm -rf web/dist
mkdir -p web/dist
wasm-bindgen --target web --out-dir web/dist/pkg \
  target/wasm32-unknown-unknown/release/drop7_web.wasm
(cd web && node_modules/.bin/tsc -p tsconfig.json)
cp web/static/* web/dist/
if [ -d "$before" ]; then
  (cd web/dist && find . -type f) | while IFS= read -r f; do
    if cmp -s "web/dist/$f" "$before/$f"; then touch -r "$before/$f" "web/dist/$f"; fi
  done
  rm -rf "$before"
fi
echo "web/dist rebuilt:"
(cd web/dist && find . -type f | sort | xargs ls -l | awk '{print "  " $5 "\t" $9}')
