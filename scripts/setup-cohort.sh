#!/usr/bin/env bash
# Prerequisites of scripts/test-cohort.sh (run as root on a fresh Debian machine by .ci/run;
# idempotent): python3 + venv, rsvg-convert (SVG -> PNG check of the plots), and
# PyPI's kubernetes-validate (bundles the Kubernetes schemas; offline validation)
# in a venv under the gitignored .venv-cohort/.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v python3 >/dev/null 2>&1 || need+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
command -v rsvg-convert >/dev/null 2>&1 || need+=(librsvg2-bin)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ ! -x .venv-cohort/bin/kubernetes-validate ]; then
  python3 -m venv .venv-cohort
  .venv-cohort/bin/pip install --quiet --disable-pip-version-check 'kubernetes-validate>=1.30'
fi
.venv-cohort/bin/kubernetes-validate --version
