#!/usr/bin/env bash
# Verifies the Counterfoil evidence of every commit in BASE..HEAD that carries a note under
# refs/notes/counterfoil, against .counterfoil/allowed_signers as committed in BASE (never as
# the pull request has it, so a pull request cannot add its own key). Exits non-zero when any
# of them does not verify; a commit without a note claims no agent evidence and is listed as
# such. Options after HEAD go to every `verify-bundle`, e.g. --allow-hand-changes CHANGELOG.md.
#
#   bash scripts/verify-evidence.sh BASE HEAD [--allow-hand-changes PATTERN ...]
#   (the notes must have been fetched: git fetch origin refs/notes/counterfoil:refs/notes/counterfoil)
set -euo pipefail
base="$1"
head="$2"
shift 2
counterfoil="${COUNTERFOIL:-counterfoil}"

if ! git cat-file -e "$base:.counterfoil/allowed_signers" 2>/dev/null; then
  echo "error: $base has no .counterfoil/allowed_signers; nobody is allowed to sign evidence" >&2
  exit 2
fi

status=0
for commit in $(git rev-list --reverse "$base..$head"); do
  short="$(git rev-parse --short "$commit")"
  if ! git notes --ref=counterfoil show "$commit" > /dev/null 2>&1; then
    echo "$short: no agent evidence claimed"
    continue
  fi
  if $counterfoil receipts verify-bundle "$commit" --signers-from "$base" "$@"; then
    :
  else
    echo "$short: the agent evidence does not verify" >&2
    status=1
  fi
done
exit "$status"
