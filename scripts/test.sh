#!/usr/bin/env bash
# Installs everything, then runs the whole test suite: lint, types, Python tests
# (core, models, daemon over stdio, and every bench/ script with --quick, checked to exit 0
# and end with its JSON line) and the editor tests in a real VS Code.
#
# The editor tests run alongside lint, types and pytest (they mostly wait on VS Code and
# Chromium, so they share two cores well); their output goes to a log that is printed, whole,
# after the Python tests. The exit status is non-zero when any part failed.
# COUNTERFOIL_TEST_SERIAL=1 runs them alone first instead (to tell a failure under load apart).
set -euo pipefail
repository="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repository"
python="${PYTHON:-python3}"
export HF_HUB_OFFLINE=1
started=$(date +%s)

bash scripts/install.sh

editor_pid=""
editor_log=""
editor_status=0
stop_editor_tests() {
  # Lint or types failed (set -e): end the editor tests' whole process group; its own
  # EXIT trap stops code-server.
  if [ -n "$editor_pid" ] && kill -0 "$editor_pid" 2>/dev/null; then
    kill -TERM -- "-$editor_pid" 2>/dev/null || true
    wait "$editor_pid" 2>/dev/null || true
  fi
  if [ -n "$editor_log" ]; then rm -f "$editor_log"; fi
}
trap stop_editor_tests EXIT

if [ -x scripts/editor-test.sh ] && [ "${COUNTERFOIL_TEST_SERIAL:-0}" = "1" ]; then
  echo "== editor tests (real VS Code), alone"
  bash scripts/editor-test.sh || editor_status=$?
elif [ -x scripts/editor-test.sh ]; then
  editor_log="$(mktemp "${TMPDIR:-/tmp}/counterfoil-editor-tests.XXXXXX")"
  echo "== editor tests (real VS Code): started alongside; their output follows pytest's"
  # A process group of its own (setsid), so that one signal ends everything it started.
  setsid bash scripts/editor-test.sh > "$editor_log" 2>&1 < /dev/null &
  editor_pid=$!
fi

echo "== ruff"
"$python" -m ruff check server tests bench
echo "== ruff format"
"$python" -m ruff format --check server tests bench
echo "== mypy"
"$python" -m mypy

status=$editor_status

# The CPU's fast path (and the real-model tier's speed) needs OpenBLAS in the pytest process too.
openblas=/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0
if [ -e "$openblas" ]; then
  export LD_PRELOAD="$openblas${LD_PRELOAD:+ $LD_PRELOAD}"
fi

echo "== pytest"
"$python" -m pytest -q -p no:cacheprovider || status=$?
unset LD_PRELOAD

if [ -n "$editor_pid" ]; then
  wait "$editor_pid" || editor_status=$?
  editor_pid=""
  echo "== editor tests (real VS Code): their output"
  cat "$editor_log"
  echo "== editor tests: exit status $editor_status"
  if [ "$editor_status" -ne 0 ]; then status=$editor_status; fi
fi
echo "== all tests took $(( $(date +%s) - started )) s"
exit "$status"
