#!/usr/bin/env bash
# Prerequisite of scripts/test-qemu.sh: Debian's user-mode QEMU (qemu-x86_64),
# to run the tests on an emulated CPU without BMI2. Idempotent; run as root.
set -euo pipefail
if command -v qemu-x86_64 >/dev/null 2>&1; then
  echo "qemu-x86_64 present"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq qemu-user >/dev/null
qemu-x86_64 --version | head -n 1
