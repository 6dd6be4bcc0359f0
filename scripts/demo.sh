#!/usr/bin/env bash
# The demo: the full approve-edit-validate-record cycle on a temporary copy of
# fixtures/demo-project, with the scripted model. You answer each approval with y or n.
set -euo pipefail
repository="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"

if ! "$python" -c "import counterfoil.cli.main" 2>/dev/null; then
  echo "Installing the counterfoil package (core only) ..."
  "$python" -m pip install --quiet -e "$repository"
fi

project="$(mktemp -d)/demo-project"
cp -r "$repository/fixtures/demo-project" "$project"
rm -rf "$project/__pycache__" "$project/.pytest_cache"
echo "Demo project copied to $project"
echo

run_goal() {
  local goal="$1" responses="$2"; shift 2
  echo "################ goal: $goal"
  "$python" -m counterfoil agent "$goal" --root "$project" \
    --model "scripted:$repository/fixtures/responses/$responses" --allow-writes "$@" || true
  echo
}

run_goal "fix app.py so tests/test_math.py passes" fix-app.jsonl \
  --allow-command "python -m pytest tests/test_math.py -q"
run_goal "make the greeting say Welcome and record why in NOTES.md" greeting.jsonl \
  --allow-command "python validate.py"

echo "################ receipts"
"$python" -m counterfoil receipts show "$project/.counterfoil/receipts.jsonl"
echo
echo "The files and the receipt log are in $project"
echo "Each run above ended with its verdict (computed from the effects) before the model's claim."
echo "Undo an edit from its receipt:  $python -m counterfoil revert call-1 --root $project"
