#!/usr/bin/env bash
# Try the extension in a browser: code-server (a real VS Code) on 127.0.0.1 with the packaged
# extension (its daemon bundled: the Python needs none of the project's packages), a fresh copy
# of fixtures/demo-project and the scripted model preset. Then type a goal in the Run panel
# (Counterfoil icon in the activity bar). Ctrl-C stops everything.
#
#   bash scripts/editor-demo.sh [PORT]        (default: a free port)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXTENSION_DIR="$REPO_ROOT/extension"
DEMO_DIR="$REPO_ROOT/.editor-demo"
PYTHON="${PYTHON:-python3}"

CODE_SERVER_BIN="$(bash "$REPO_ROOT/scripts/install-editor.sh" | tail -n 1)"
# shellcheck source=../extension/scripts/code-server.sh
source "$EXTENSION_DIR/scripts/code-server.sh"

if ! "$PYTHON" -c "import sys; sys.exit(sys.version_info < (3, 11))" 2>/dev/null; then
  echo "the demo needs Python 3.11 or newer as \$PYTHON (now: $PYTHON)" >&2
  exit 1
fi

(cd "$EXTENSION_DIR" && PYTHON="$PYTHON" npm run --silent package > /dev/null)

rm -rf "$DEMO_DIR"
mkdir -p "$DEMO_DIR"
WORKSPACE="$DEMO_DIR/demo-project"
cp -R "$REPO_ROOT/fixtures/demo-project" "$WORKSPACE"
mkdir -p "$WORKSPACE/.vscode"
"$PYTHON" - "$WORKSPACE/.vscode/settings.json" "$REPO_ROOT/fixtures/responses/fix-app.jsonl" <<'PY'
import json, sys
settings_path, responses = sys.argv[1], sys.argv[2]
settings = {
    "counterfoil.model": f"scripted:{responses}",
    "counterfoil.allowWrites": True,
    "counterfoil.allowedCommands": [["python", "-m", "pytest", "tests/test_math.py", "-q"]],
    "counterfoil.receiptLog": ".counterfoil/receipts.jsonl",
}
with open(settings_path, "w", encoding="utf-8") as file:
    json.dump(settings, file, indent=2)
PY

trap code_server_stop EXIT
trap 'exit 130' INT TERM
code_server_prepare "$CODE_SERVER_BIN" "$DEMO_DIR/code-server" "$EXTENSION_DIR/counterfoil.vsix"
# The Python that runs the daemon is a setting that starts a program: VS Code takes it from the
# user's settings only (machine scope), never the folder's.
"$PYTHON" - "$DEMO_DIR/code-server/user" <<'PY'
import json, pathlib, sys
for name in ("User", "Machine"):
    path = pathlib.Path(sys.argv[1], name, "settings.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = json.loads(path.read_text()) if path.exists() else {}
    settings["counterfoil.pythonPath"] = sys.executable
    path.write_text(json.dumps(settings, indent=2))
PY
PORT="${1:-$(code_server_free_port)}"
code_server_start "$CODE_SERVER_BIN" "$DEMO_DIR/code-server" "$PORT" "$WORKSPACE"

cat <<TEXT
Counterfoil demo: http://127.0.0.1:$PORT/?folder=$WORKSPACE
  The Counterfoil icon in the activity bar opens the Run panel and the receipts. Type any goal
  in the panel and Run (or F1 → "Counterfoil: Run Agent…"). The scripted model reads app.py
  and proposes the one-character fix as a diff: the left side is what the model read, the right
  side is editable. Accept (Ctrl+Enter) or Reject (Ctrl+Shift+Backspace) in the diff's title bar
  or in the panel, where you can also type a reason for rejecting. Try: type in app.py without
  saving, then Accept (nothing is written); or save app.py elsewhere while the diff is open (the
  proposal goes stale). It then asks to run the test (a modal: Accept or Reject). After the run
  the panel shows the verdict and the model's claim; send a follow-up from the same box. In
  Receipts (grouped by run) click an edit for its applied diff, or Revert it. Stop run stops a
  run. Demo files: $DEMO_DIR
  Ctrl-C to stop.
TEXT
wait "$CODE_SERVER_PGID"
