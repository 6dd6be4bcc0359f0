"""Where the person's approval rules (`gate/rules.py`) come from, and only from the person:
`counterfoil.approvalRules` in the editor's settings, where a folder's settings may add `ask`
and `deny` rules (put before the person's) and never an `allow`; for the terminal, the file
`approval-rules.json` in Counterfoil's configuration folder, or the file `--rules` names
instead. A file that cannot be read, or holds a bad rule, refuses the run with one sentence:
a rule is never dropped in silence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..gate.rules import NO_RULES, RuleError, RuleSet, parse_rules
from ..receipts.signing import config_dir
from .checks import Invalid
from .folder_rules import Decision, FolderRule

RULES_FILE = "approval-rules.json"


def approval_rules(value: object) -> RuleSet:
    """The settings table's check of `approvalRules`."""
    if not isinstance(value, list):
        raise Invalid("must be a list of rule objects (see docs/settings.md)")
    try:
        return parse_rules(value, "")
    except RuleError as error:
        raise Invalid(str(error)) from None


class NarrowRules(FolderRule):
    """A folder may add rules that ask or refuse, ahead of the person's (the first match
    decides, so they narrow what the person's `allow` rules cover); a folder's value with an
    `allow` is ignored whole."""

    name = "narrow only: ask and deny rules, before yours (an allow is ignored)"

    def decide(self, person: Any, folder: Any, root: Path | None) -> Decision:
        if any(rule.decision == "allow" for rule in folder.rules):
            return Decision("ignored", person)
        return Decision("narrowed", RuleSet(folder.rules + person.rules))


NARROW_RULES = NarrowRules()


def read_rules_file(path: Path, origin: str | None = None) -> RuleSet:
    """The rules a JSON file holds; RuleError in one sentence that names the file."""
    where = origin or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RuleError(f"{where}: no such file") from None
    except UnicodeDecodeError:
        raise RuleError(f"{where}: not UTF-8 text") from None
    except OSError as error:
        raise RuleError(f"{where}: could not be read ({error.strerror})") from None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise RuleError(f"{where}: not JSON ({error})") from None
    return parse_rules(value, where)


def terminal_rules(flag: Path | None, folder: Path | None = None) -> RuleSet:
    """The terminal's rules: the file `--rules` names, else `approval-rules.json` in the
    configuration folder (`folder`, or Counterfoil's own) when there is one, else none."""
    if flag is not None:
        return read_rules_file(flag, f"--rules {flag}")
    path = (folder if folder is not None else config_dir()) / RULES_FILE
    if not path.exists() and not path.is_symlink():
        return NO_RULES
    return read_rules_file(path)
