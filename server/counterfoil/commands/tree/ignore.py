"""Which paths a tree snapshot leaves out: the usual caches, and the project's `.gitignore`s.

Read in Python (no `git` subprocess, so a snapshot costs a walk, not a program start): every
`.gitignore` on the way down applies to its folder and below. Supported: comments and blank
lines, `!` re-inclusion, a trailing `/` for folders only, a leading or inner `/` anchoring the
pattern to its `.gitignore`'s folder, `*`, `?`, `[...]` and `**` (`**/x`, `x/**`, `a/**/b`).
Not read: `.git/info/exclude`, the global excludes file, and escapes with `\\`; as in git, a
file in an excluded folder cannot be re-included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Caches and installs that tools rewrite all the time: left out by name, counted, not listed.
CACHE_NAMES = frozenset(
    {
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "node_modules",
        ".ipynb_checkpoints",
    }
)
GITIGNORE = ".gitignore"
# In a `.git` folder (which is otherwise git's own: objects, refs, the index), what changes what
# git runs: its config (`core.fsmonitor`, `core.hooksPath`, aliases), hooks, and info
# (`exclude`, `attributes`). These are recorded by stat, as protected files, so a change to
# them is on the receipt; the rest of `.git` is neither walked nor counted.
GIT_FOLDER = ".git"
GIT_WATCHED = frozenset({"config", "config.worktree", "hooks", "info"})
WALK, RECORD, SKIP = "walk", "record", "skip"
MAX_GITIGNORE_BYTES = 256 * 1024


@dataclass(frozen=True)
class IgnoreRule:
    """One `.gitignore` line: `base` is its folder ("" for the root), relative to the root."""

    base: str
    regex: re.Pattern[str]
    negated: bool
    folders_only: bool


def _translate(pattern: str) -> str:
    """A gitignore glob as a regular expression over a `/`-separated path."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("/**", index) and index + 3 == len(pattern):
            out.append("/.*")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            end = pattern.find("]", index + 2)
            if end < 0:
                out.append(re.escape(char))
                index += 1
            else:
                body = pattern[index + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                index = end + 1
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)


def parse_gitignore(text: str, base: str) -> list[IgnoreRule]:
    """The rules of one `.gitignore` in folder `base`; lines that cannot be read are skipped."""
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = raw.rstrip(" ")
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        folders_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        expression = body if anchored else f"(?:.*/)?{body}"
        try:
            regex = re.compile(expression + r"\Z", re.DOTALL)
        except re.error:
            continue
        rules.append(IgnoreRule(base, regex, negated, folders_only))
    return rules


def in_git_folder(parts: list[str], is_folder: bool) -> str | None:
    """For a path inside (or naming) a `.git` folder: whether the walk walks it, records it
    (by stat, protected) or skips it; None for any other path."""
    for index, part in enumerate(parts):
        if part.casefold() != GIT_FOLDER:
            continue
        below = parts[index + 1 :]
        if not below:
            return WALK if is_folder else None
        if below[0].casefold() not in GIT_WATCHED:
            return SKIP
        if len(below) > 1 and below[0].casefold() not in ("hooks", "info"):
            return SKIP
        return WALK if is_folder else RECORD
    return None


def is_ignored(rules: list[IgnoreRule], path: str, is_folder: bool) -> bool:
    """Whether the last rule that matches `path` (relative to the root) excludes it."""
    ignored = False
    for rule in rules:
        if rule.folders_only and not is_folder:
            continue
        if rule.base:
            if not path.startswith(rule.base + "/"):
                continue
            relative = path[len(rule.base) + 1 :]
        else:
            relative = path
        if rule.regex.match(relative):
            ignored = not rule.negated
    return ignored
