#!/usr/bin/env bash
# Installs everything, then runs the whole test suite: lint, types, Python tests
# (core, models, daemon over stdio, and every bench/ script with --quick, checked to exit 0
# and end with its JSON line) and the editor tests in a real VS Code.
set -euo pipefail
repository="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repository"
python="${PYTHON:-python3}"
export HF_HUB_OFFLINE=1

bash scripts/install.sh

echo "== ruff"
"$python" -m ruff check server tests bench
echo "== ruff format"
"$python" -m ruff format --check server tests bench
echo "== mypy"
"$python" -m mypy

status=0
if [ -x scripts/editor-test.sh ]; then
  echo "== editor tests (real VS Code)"
  bash scripts/editor-test.sh || status=$?
fi

# The CPU's fast path (and the real-model tier's speed) needs OpenBLAS in the pytest process too.
openblas=/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0
if [ -e "$openblas" ]; then
  export LD_PRELOAD="$openblas${LD_PRELOAD:+ $LD_PRELOAD}"
fi

echo "== pytest"
"$python" -m pytest -q -p no:cacheprovider || status=$?
exit "$status"
