#!/usr/bin/env bash
# Verifies the Counterfoil evidence of every commit in BASE..HEAD that carries a note under
# refs/notes/counterfoil, against the repository's .counterfoil/allowed_signers (as committed
# in BASE, so a pull request cannot add its own key). Exits non-zero when any of them does not
# verify; a commit without a note claims no agent evidence and is listed as such.
#
#   bash scripts/verify-evidence.sh BASE HEAD
#   (the notes must have been fetched: git fetch origin refs/notes/counterfoil:refs/notes/counterfoil)
set -euo pipefail
base="$1"
head="$2"
counterfoil="${COUNTERFOIL:-counterfoil}"

signers="$(mktemp)"
trap 'rm -f "$signers"' EXIT
if ! git show "$base:.counterfoil/allowed_signers" > "$signers" 2>/dev/null; then
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
  if $counterfoil receipts verify-bundle "$commit" --allowed-signers "$signers"; then
    :
  else
    echo "$short: the agent evidence does not verify" >&2
    status=1
  fi
done
exit "$status"
