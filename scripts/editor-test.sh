#!/usr/bin/env bash
# The extension's tests: type check, eslint, format, unit tests (no VS Code), then the packaged
# .vsix (with its bundled daemon) installed
# into a real VS Code (code-server on 127.0.0.1) driven by Debian's Chromium: extension-host
# tests through the real vscode API and a UI test of the agent flow, both against the real
# daemon. Screenshots go to test-artifacts/editor/. Exits non-zero on any failure. The test
# code-server leaves out the built-in extensions no test uses (git, GitHub, the JSON and
# TypeScript language features, Emmet, ...): each would start in every window the tests open.
#
#   bash scripts/editor-test.sh [NAME]     NAME: only extension/test/ui/NAME.test.ts
#   UI_TEST_PATTERN=REGEX bash scripts/editor-test.sh NAME   only its tests whose names match
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXTENSION_DIR="$REPO_ROOT/extension"
ARTIFACTS="$REPO_ROOT/test-artifacts/editor"
PYTHON="${PYTHON:-python3}"
started=$(date +%s)

CODE_SERVER_BIN="$(bash "$REPO_ROOT/scripts/install-editor.sh" | tail -n 1)"
# shellcheck source=../extension/scripts/code-server.sh
source "$EXTENSION_DIR/scripts/code-server.sh"

if ! "$PYTHON" -c "import counterfoil.lsp" 2>/dev/null; then
  echo "editor tests need the counterfoil package with its daemon: pip install -e '$REPO_ROOT[lsp]'" >&2
  exit 1
fi

cd "$EXTENSION_DIR"
echo "== extension: type check, lint and format"
npx tsc --noEmit -p .
npx eslint src
npx prettier --check . > /dev/null || { npx prettier --list-different .; echo "run: npm run format (in extension/)" >&2; exit 1; }
echo "== extension: build and unit tests"
node esbuild.mjs
node --test dist/test/unit/
echo "== extension: package (with the daemon bundled)"
PYTHON="$PYTHON" npm run --silent package > /dev/null
echo "counterfoil.vsix: $(( $(stat -c %s counterfoil.vsix) / 1024 )) KiB"

# Built-in extensions (their folder names) that no UI test uses; code-server would activate them in
# every window (git scans the folder, JSON starts a language server) while the test waits.
export CODE_SERVER_DISABLED_EXTENSIONS="git git-base github github-authentication microsoft-authentication
  emmet merge-conflict debug-auto-launch debug-server-ready json-language-features
  typescript-language-features configuration-editing extension-editing npm references-view
  ms-vscode.js-debug ms-vscode.js-debug-companion ms-vscode.vscode-js-profile-table
  tunnel-forwarding simple-browser ipynb terminal-suggest markdown-math"

STATE="$(mktemp -d "${TMPDIR:-/tmp}/counterfoil-editor.XXXXXX")"
cleanup() {
  code_server_stop
  rm -rf "$STATE"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$ARTIFACTS"
mkdir -p "$ARTIFACTS"
code_server_prepare "$CODE_SERVER_BIN" "$STATE/code-server" "$EXTENSION_DIR/counterfoil.vsix"
PORT="$(code_server_free_port)"
code_server_start "$CODE_SERVER_BIN" "$STATE/code-server" "$PORT"
echo "== code-server on http://127.0.0.1:$PORT"

echo "== extension: in VS Code (extension host and UI)"
status=0
COUNTERFOIL_EDITOR_URL="http://127.0.0.1:$PORT" \
COUNTERFOIL_EDITOR_STATE="$STATE" \
COUNTERFOIL_CODE_SERVER_BIN="$CODE_SERVER_BIN" \
COUNTERFOIL_REPO="$REPO_ROOT" \
COUNTERFOIL_ARTIFACTS="$ARTIFACTS" \
COUNTERFOIL_PYTHON="$("$PYTHON" -c 'import sys; print(sys.executable)')" \
  node --test --test-concurrency=1 --test-timeout=300000 \
    ${UI_TEST_PATTERN:+"--test-name-pattern=$UI_TEST_PATTERN"} "dist/test/ui/${1:+$1.test.js}" || status=$?

# VS Code's logs, the daemon's trace among them (output channel "Counterfoil"), for diagnosis.
mkdir -p "$ARTIFACTS/logs"
cp "$STATE/code-server/code-server.log" "$ARTIFACTS/logs/" 2>/dev/null || true
find "$STATE/code-server/user/logs" -name '*.log' -exec cp --backup=numbered -t "$ARTIFACTS/logs" {} + 2>/dev/null || true
echo "== editor tests took $(( $(date +%s) - started )) s; screenshots in $ARTIFACTS"
exit "$status"
