# Sourced (not run) by the scripts/test-*.sh suites: sets and exports
# DROP7_BIN, the release `drop7` binary the suite drives. scripts/test-all
# exports the one its `cargo test --release --workspace` has just built: a
# `cargo build --release -p drop7-cli` after it resolves other dependency
# features (no dev-dependencies, no Python or web crate), so it would redo the
# fat-LTO build (about 5 minutes on 2 cores) for a binary that behaves the
# same. A suite run on its own builds the binary here.
if [ -z "${DROP7_BIN:-}" ]; then
  cargo build --release --quiet -p drop7-cli
  DROP7_BIN="$PWD/target/release/drop7"
fi
# The suites run it from other folders (the browser tests from web/): a
# relative path is taken from the repository's root (where the suites
# start), a bare name is looked up on PATH.
case $DROP7_BIN in
  /*) ;;
  */*) DROP7_BIN="$PWD/$DROP7_BIN" ;;
  *) DROP7_BIN=$(command -v "$DROP7_BIN" || echo "$DROP7_BIN") ;;
esac
if [ ! -x "$DROP7_BIN" ] || [ -d "$DROP7_BIN" ]; then
  echo "error: DROP7_BIN=$DROP7_BIN is not an executable drop7 binary" >&2
  exit 1
fi
export DROP7_BIN
