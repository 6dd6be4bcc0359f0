"""Approval rules: the person's ordered `allow` / `ask` / `deny` entries that decide the routine
questions, so a question that is asked is one worth reading.

A rule names one kind of effect: a command by its exact argv (`argv`) or by the whole arguments
it starts with (`argvPrefix`: never a shell pattern, so `["git", "log"]` is no prefix of
`["git", "logout"]`), a file write or edit by a path pattern under the root (`path`), or an MCP
call by server and tool (`mcpServer`, `mcpTool`). The first rule that matches decides; no match
asks. Four effects are asked about whatever an `allow` says (`never_allowed`): a command that
runs unconfined, a write to a protected name, an effect the person already said No to in this
run, and an MCP tool whose definition is not pinned. A rule only skips a question: a command
still has to be allowed, a write still has to be enabled, and every other check still runs.

The set's digest is taken over its canonical JSON, so a receipt names the exact set in force.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import translate
from pathlib import PurePosixPath
from typing import Literal

from ..files.path_text import shown_path
from ..files.paths import is_protected_path
from ..receipts.record import canonical_json, sha256_text
from ..tools import is_argv

Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
FILE_TOOLS = ("write_file", "edit_file")
KEYS = ("decision", "argv", "argvPrefix", "path", "mcpServer", "mcpTool")
ANY_FOLDERS = "**"


class RuleError(ValueError):
    """A rule that cannot be read: one sentence that names where it is and what is wrong."""


@dataclass(frozen=True)
class RuleEffect:
    """One effect as the rules see it: what it is (a command's argv, a file's path relative to
    the root as the gate resolved it, an MCP call's server and tool) and the facts that keep a
    rule from allowing it (see `never_allowed`)."""

    tool: str
    argv: tuple[str, ...] | None = None
    path: str | None = None
    server: str | None = None
    mcp_tool: str | None = None
    confined: bool = True  # a command: it runs in a sandbox (`confine` or `review`)
    pinned: bool = True  # an MCP call: its tool's definition is pinned
    rejected_before: bool = False  # the person said No to this same effect earlier in the run

    def describe(self) -> str:
        """The effect in a few words: `run pytest -q`, `edit_file docs/a.md`, `MCP s/t`."""
        if self.argv is not None:
            text = "run " + " ".join(self.argv)
        elif self.path is not None:
            text = f"{self.tool} {self.path}"
        elif self.tool == "mcp_call":
            text = f"MCP {self.server}/{self.mcp_tool}"
        else:
            text = self.tool
        return shown_path(text)  # one line, whatever the model named

    @property
    def key(self) -> tuple[str, ...]:
        """What makes two effects the same one for a person's No: the argv, the path, or the
        server and tool."""
        if self.argv is not None:
            return ("argv", *self.argv)
        if self.path is not None:
            return ("path", self.path)
        return ("mcp", self.server or "", self.mcp_tool or "")


@dataclass(frozen=True)
class ApprovalRule:
    """One entry; exactly one of `argv`, `argv_prefix`, `path` or the MCP pair is set."""

    decision: Decision
    argv: tuple[str, ...] | None = None
    argv_prefix: tuple[str, ...] | None = None
    path: str | None = None
    mcp_server: str | None = None
    mcp_tool: str | None = None

    def as_record(self) -> dict[str, str | list[str]]:
        """The rule as its JSON entry: what a person writes, and what the digest covers."""
        record: dict[str, str | list[str]] = {"decision": self.decision}
        if self.argv is not None:
            record["argv"] = list(self.argv)
        if self.argv_prefix is not None:
            record["argvPrefix"] = list(self.argv_prefix)
        if self.path is not None:
            record["path"] = self.path
        if self.mcp_server is not None and self.mcp_tool is not None:
            record["mcpServer"] = self.mcp_server
            record["mcpTool"] = self.mcp_tool
        return record

    @property
    def text(self) -> str:
        """The rule's canonical JSON: how a receipt names it."""
        return canonical_json(self.as_record())

    def describe(self) -> str:
        """The rule in a few words, for a line a person reads."""
        if self.argv is not None:
            text = f"{self.decision} the command {' '.join(self.argv)}"
        elif self.argv_prefix is not None:
            text = f"{self.decision} commands starting {' '.join(self.argv_prefix)}"
        elif self.path is not None:
            text = f"{self.decision} writes to {self.path}"
        else:
            text = f"{self.decision} MCP {self.mcp_server}/{self.mcp_tool}"
        return shown_path(text)

    def matches(self, effect: RuleEffect) -> bool:
        """Whether the rule names this effect (the `never` cases aside)."""
        if self.argv is not None or self.argv_prefix is not None:
            if effect.tool != "run_command" or effect.argv is None:
                return False
            if self.argv is not None:
                return effect.argv == self.argv
            prefix = self.argv_prefix or ()
            return effect.argv[: len(prefix)] == prefix
        if self.path is not None:
            if effect.tool not in FILE_TOOLS or effect.path is None:
                return False
            # Narrowing rules fold letter case (on a disk that ignores it `SRC/a` is `src/a`);
            # an `allow` matches only the spelling it names, so case never widens it.
            return path_matches(self.path, effect.path, fold_case=self.decision != "allow")
        return (
            effect.tool == "mcp_call"
            and effect.server == self.mcp_server
            and effect.mcp_tool == self.mcp_tool
        )


@dataclass(frozen=True)
class RuleDecision:
    """What the rules decided for one effect: `allow` (approved without asking), `ask` or
    `deny` (refused); `rule` and `index` (from 1) name the first rule that matched (None: no
    rule did), `held` why an `allow` was asked about instead."""

    decision: Decision
    rule: ApprovalRule | None = None
    index: int | None = None
    held: str | None = None
    rules_sha256: str | None = None
    effect: RuleEffect | None = None

    def line(self) -> str:
        """What a person is shown as a rule approves an effect: the effect and the rule."""
        assert self.rule is not None and self.effect is not None
        return (
            f"{self.effect.describe()}: approved by your rule {self.index} ({self.rule.describe()})"
        )


@dataclass(frozen=True)
class RuleSet:
    """The rules in force, in order."""

    rules: tuple[ApprovalRule, ...] = ()

    def as_record(self) -> list[dict[str, str | list[str]]]:
        return [rule.as_record() for rule in self.rules]

    @property
    def sha256(self) -> str:
        """The digest of the set's canonical JSON: a receipt names the set by it."""
        return sha256_text(canonical_json(self.as_record()))

    def joined(self, *others: RuleSet) -> RuleSet:
        return RuleSet(self.rules + tuple(rule for other in others for rule in other.rules))

    def first_match(self, effect: RuleEffect) -> tuple[int, ApprovalRule] | None:
        return next(
            ((index, rule) for index, rule in enumerate(self.rules, 1) if rule.matches(effect)),
            None,
        )

    def decide(self, effect: RuleEffect, protected_patterns: tuple[str, ...] = ()) -> RuleDecision:
        """The first match's decision; an `allow` that cannot allow this effect asks."""
        found = self.first_match(effect)
        if found is None:
            return RuleDecision("ask")
        index, rule = found
        held = never_allowed(effect, protected_patterns) if rule.decision == "allow" else None
        decision: Decision = "ask" if held is not None else rule.decision
        return RuleDecision(decision, rule, index, held, self.sha256, effect)


NO_RULES = RuleSet()


def denied_by_rule(decided: RuleDecision) -> str:
    """The refusal a `deny` gives: the gate's, not the person's No, with the rule named."""
    rule = decided.rule
    assert rule is not None
    return f"refused by the person's approval rule {decided.index} ({rule.describe()})"


def never_allowed(effect: RuleEffect, protected_patterns: tuple[str, ...] = ()) -> str | None:
    """Why no rule may approve this effect without asking (None: a rule may)."""
    if effect.rejected_before:
        return "you said No to this same effect earlier in this run"
    if effect.argv is not None and not effect.confined:
        return "the command would run unconfined (--sandbox off)"
    if effect.path is not None and is_protected_path(
        PurePosixPath(effect.path).parts, protected_patterns
    ):
        return "the path is protected"
    if effect.tool == "mcp_call" and not effect.pinned:
        return "the MCP tool's definition is not pinned"
    return None


def path_matches(pattern: str, path: str, *, fold_case: bool = False) -> bool:
    """Whether `path` (relative to the root, `/`-separated) matches `pattern`: each part an
    fnmatch pattern for one name (`*` never crosses a `/`), `**` any number of folders (at the
    end: at least one name)."""
    names = [part for part in PurePosixPath(path).parts if part != "."]
    parts = pattern_parts(pattern)
    if fold_case:
        names = [name.casefold() for name in names]
        parts = tuple(part.casefold() for part in parts)
    return _match(parts, names)


def _match(parts: Sequence[str], names: Sequence[str]) -> bool:
    if not parts:
        return not names
    head, rest = parts[0], parts[1:]
    if head == ANY_FOLDERS:
        least = 1 if not rest else 0
        return any(_match(rest, names[skip:]) for skip in range(least, len(names) + 1))
    return bool(names) and _name(head).fullmatch(names[0]) is not None and _match(rest, names[1:])


def _name(part: str) -> re.Pattern[str]:
    return re.compile(translate(part))


def pattern_parts(pattern: str) -> tuple[str, ...]:
    return tuple(part for part in pattern.split("/") if part not in ("", "."))


def parse_rules(value: object, origin: str, *, allow: bool = True) -> RuleSet:
    """The rules a setting or a file holds (a JSON list of entries); RuleError names `origin`
    (when given) and the first bad entry. `allow=False`: a folder's settings, which may narrow
    (`ask`, `deny`) only."""
    where = f"{origin}: " if origin else ""
    if not isinstance(value, list):
        raise RuleError(f"{where}approval rules must be a list of rule objects")
    rules = []
    for number, entry in enumerate(value, 1):
        try:
            rule = parse_rule(entry)
        except RuleError as error:
            raise RuleError(f"{where}rule {number}: {error}") from None
        if rule.decision == "allow" and not allow:
            raise RuleError(
                f"{where}rule {number}: a folder's settings may add ask and deny rules only,"
                " never allow"
            )
        rules.append(rule)
    return RuleSet(tuple(rules))


def parse_rule(entry: object) -> ApprovalRule:
    """One entry, or RuleError with what is wrong with it (without where it is)."""
    if not isinstance(entry, dict):
        raise RuleError("must be an object")
    unknown = sorted(str(key) for key in entry if key not in KEYS)
    if unknown:
        raise RuleError(f"unknown key {unknown[0]} (the keys are {', '.join(KEYS)})")
    decision = entry.get("decision")
    if decision not in DECISIONS:
        raise RuleError("decision must be allow, ask or deny")
    kinds = [
        kind
        for kind in ("argv", "argvPrefix", "path", "mcp")
        if (kind != "mcp" and kind in entry)
        or (kind == "mcp" and ("mcpServer" in entry or "mcpTool" in entry))
    ]
    if len(kinds) != 1:
        raise RuleError("must name exactly one of argv, argvPrefix, path or mcpServer with mcpTool")
    kind = kinds[0]
    if kind in ("argv", "argvPrefix"):
        argv = entry[kind]
        if not isinstance(argv, list) or not is_argv(argv):
            raise RuleError(f"{kind} must be a list of non-empty strings without NUL")
        if kind == "argv":
            return ApprovalRule(decision, argv=tuple(argv))
        return ApprovalRule(decision, argv_prefix=tuple(argv))
    if kind == "path":
        return ApprovalRule(decision, path=_checked_pattern(entry["path"]))
    server, tool = entry.get("mcpServer"), entry.get("mcpTool")
    for key, name in (("mcpServer", server), ("mcpTool", tool)):
        if not isinstance(name, str) or not name.strip() or "\0" in name:
            raise RuleError(f"{key} must be a non-empty string (an MCP rule names both)")
    assert isinstance(server, str) and isinstance(tool, str)
    return ApprovalRule(decision, mcp_server=server, mcp_tool=tool)


def _checked_pattern(pattern: object) -> str:
    if not isinstance(pattern, str) or not pattern.strip() or "\0" in pattern:
        raise RuleError("path must be a non-empty pattern")
    if pattern.startswith("/") or "\\" in pattern:
        raise RuleError("path must be relative to the root, with / between names")
    parts = pattern_parts(pattern)
    if ".." in parts:
        raise RuleError("path must stay under the root (no ..)")
    if not parts:
        raise RuleError("path must name files under the root")
    return "/".join(parts)
