#!/usr/bin/env bash
# Installs everything, then runs the whole test suite: lint, types, Python tests
# (core, models, daemon over stdio, and every bench/ script with --quick, checked to exit 0
# and end with its JSON line) and the editor tests in a real VS Code.
#
# Where the machine has 4 cores or more, the editor tests run alongside lint, types and pytest
# (they mostly wait on VS Code and Chromium); their output goes to a log that is printed, whole,
# after the Python tests. With fewer cores they run after pytest, so that neither starves the
# other of CPU (a test waits for what it checks, but two cores shared by code-server, Chromium
# and pytest made the whole run slower than one part after the other).
# pytest runs its tests on one worker per core (at least 2, at most 4) through pytest-xdist,
# work-stealing (a few tests take a minute, most under a second); without xdist it runs them
# in one process.
# COUNTERFOIL_TEST_SERIAL=1 runs the editor tests alone first instead, and pytest in one
# process (to tell a failure under load apart).
#
# Every part runs even when an earlier one failed; a summary of each part's result and time
# ends the output, and the exit status is non-zero when any part failed.
set -uo pipefail
repository="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repository"
python="${PYTHON:-python3}"
export HF_HUB_OFFLINE=1
started=$(date +%s)
cores="$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)"

bash scripts/install.sh || { echo "== install failed: nothing was tested"; exit 1; }

summary=()
status=0
# Record one part's result: name, exit status, seconds.
note() {
  local result="ok"
  if [ "$2" -ne 0 ]; then result="FAILED (exit $2)"; status=1; fi
  summary+=("$(printf '%-14s %-18s %5d s' "$1" "$result" "$3")")
}
# Run one part, timed, and note its result.
part() {
  local name="$1" begun code=0
  shift
  echo "== $name"
  begun=$(date +%s)
  "$@" || code=$?
  note "$name" "$code" "$(( $(date +%s) - begun ))"
}

editor_pid=""
editor_log=""
editor_begun=0
stop_editor_tests() {
  # Interrupted: end the editor tests' whole process group; its own EXIT trap stops
  # code-server.
  if [ -n "$editor_pid" ] && kill -0 "$editor_pid" 2>/dev/null; then
    kill -TERM -- "-$editor_pid" 2>/dev/null || true
    wait "$editor_pid" 2>/dev/null || true
  fi
  if [ -n "$editor_log" ]; then rm -f "$editor_log"; fi
}
trap stop_editor_tests EXIT

editor_when=none
if [ -x scripts/editor-test.sh ]; then
  if [ "${COUNTERFOIL_TEST_SERIAL:-0}" = "1" ]; then
    editor_when=first
  elif [ "$cores" -ge 4 ]; then
    editor_when=alongside
  else
    editor_when=after
  fi
fi

if [ "$editor_when" = first ]; then
  part "editor tests" bash scripts/editor-test.sh
elif [ "$editor_when" = alongside ]; then
  editor_log="$(mktemp "${TMPDIR:-/tmp}/counterfoil-editor-tests.XXXXXX")"
  echo "== editor tests (real VS Code): started alongside ($cores cores); their output follows pytest's"
  # A process group of its own (setsid), so that one signal ends everything it started.
  editor_begun=$(date +%s)
  setsid bash scripts/editor-test.sh > "$editor_log" 2>&1 < /dev/null &
  editor_pid=$!
fi

part "ruff" "$python" -m ruff check server tests bench
part "ruff format" "$python" -m ruff format --check server tests bench
part "mypy" "$python" -m mypy

# The CPU's fast path (and the real-model tier's speed) needs OpenBLAS in the pytest process too.
openblas=/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0
pytest_preload="${LD_PRELOAD:-}"
if [ -e "$openblas" ]; then
  pytest_preload="$openblas${LD_PRELOAD:+ $LD_PRELOAD}"
fi
# Most tests wait on a process they started (a daemon, a command, a model run), so one pytest
# process keeps about one core busy: xdist runs one worker per core, at least 2 (a 2-core
# machine is still half idle with one) and at most 4 (beyond that the few minute-long tests,
# not the count of workers, bound the time).
workers=()
if [ "${COUNTERFOIL_TEST_SERIAL:-0}" != "1" ] && "$python" -c "import xdist" 2>/dev/null; then
  count="$cores"
  [ "$count" -ge 2 ] || count=2
  [ "$count" -le 4 ] || count=4
  workers=(-n "$count" --dist worksteal)
fi
# --durations=20: every log lists the slowest tests, so a slower suite shows where it went.
part "pytest" env LD_PRELOAD="$pytest_preload" "$python" -m pytest -q -p no:cacheprovider \
  --durations=20 ${workers[@]+"${workers[@]}"}

if [ "$editor_when" = alongside ]; then
  editor_status=0
  wait "$editor_pid" || editor_status=$?
  editor_pid=""
  echo "== editor tests (real VS Code): their output"
  cat "$editor_log"
  note "editor tests" "$editor_status" "$(( $(date +%s) - editor_begun ))"
elif [ "$editor_when" = after ]; then
  echo "(editor tests after pytest: $cores cores)"
  part "editor tests" bash scripts/editor-test.sh
fi

echo "== summary"
printf '%s\n' "${summary[@]}"
echo "== all tests took $(( $(date +%s) - started )) s: $([ "$status" -eq 0 ] && echo passed || echo FAILED)"
exit "$status"
