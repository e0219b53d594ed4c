#!/usr/bin/env bash
# CI setup for the terminal viewer's test (scripts/test-show.sh): tmux.
# Run as root on a fresh Debian machine; idempotent.
set -euo pipefail
if ! command -v tmux >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq tmux >/dev/null
fi
tmux -V
