"""patch_file's hunk, read as the one exact edit it makes.

A small model writes a unified diff of a file it was shown unprompted, and a diff names its
change line by line: `-` a line of the file removed, ` ` a line kept, `+` a line added. The
hunk is placed only where its kept and removed lines are, in order, consecutive whole lines of
the file, exactly once; it is then the `edit_file` of those lines (widened by whole lines until
the old text occurs once), so the person approves, and the receipt keeps, the exact edit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import AgentError
from .edits import occurrences

# The lines a unified diff starts with (`git diff` writes all of them) and a hunk's header,
# which says where the model thinks the hunk is: not read.
HEADERS = ("diff --git ", "index ", "--- ", "+++ ", "@@")


@dataclass(frozen=True)
class Hunk:
    """The lines of the file the hunk names (kept or removed), in order, and what they become."""

    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]


def parse_hunk(diff: str) -> Hunk:
    """The hunk's old and new lines; raises AgentError saying which line is not a diff line."""
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    headers = 0
    while headers < len(lines) and lines[headers].startswith(HEADERS):
        headers += 1
    old: list[str] = []
    new: list[str] = []
    changed = False
    for number, line in enumerate(lines[headers:], headers + 1):  # numbered as sent
        mark, text = line[:1], line[1:]
        if mark in ("", " "):  # a blank line kept: a model drops the space of its mark
            old.append(text)
            new.append(text)
        elif mark == "-":
            old.append(text)
            changed = True
        elif mark == "+":
            new.append(text)
            changed = True
        else:
            raise AgentError(
                f"line {number} of diff starts with neither ' ' (a line kept), '-' (removed)"
                " nor '+' (added)"
            )
    if not changed:
        raise AgentError("nothing to write: diff has no line after '-' or '+'")
    if not old:
        raise AgentError(
            "diff names no line of the file; give at least one line as it is, after ' ' or '-',"
            " to say where the new lines go"
        )
    return Hunk(tuple(old), tuple(new))


def patch_edit(text: str, diff: str, path: str = "") -> tuple[str, str]:
    """The `(old, new)` of the exact edit `diff` makes to `text`: old occurs once in text."""
    hunk = parse_hunk(diff)
    lines = text.split("\n")
    height = len(hunk.old_lines)
    starts = [
        start
        for start in range(len(lines) - height + 1)
        if tuple(lines[start : start + height]) == hunk.old_lines
    ]
    if len(starts) != 1:
        raise AgentError(_miss(path, starts))
    first, last = starts[0], starts[0] + height  # the lines replaced: first up to last
    new_lines = list(hunk.new_lines)
    while True:
        before, after = first > 0, last < len(lines)
        old = "\n".join(lines[first:last])
        new = "\n".join(new_lines)
        if not new_lines:  # the lines go, and one newline with them
            old = ("\n" if before else "") + old + ("\n" if after else "")
            new = "\n" if before and after else ""
        if occurrences(text, old) == 1:
            return old, new
        # Widened by the file's next line (else its previous one) until the old text is
        # unique: the edit is the same, and it names enough of the file to say where.
        if after:
            new_lines.append(lines[last])
            last += 1
        else:
            first -= 1
            new_lines.insert(0, lines[first])


def _miss(path: str, starts: list[int]) -> str:
    if not starts:
        return (
            f"diff's kept and removed lines (after ' ' and '-') are not consecutive lines of"
            f" {path} as it is: copy them in order from the file, or read it again with read_file"
        )
    where = ", ".join(str(start + 1) for start in starts)
    return (
        f"diff's kept and removed lines occur {len(starts)} times in {path} (from lines {where}):"
        " add the lines around them, after ' ', to say which"
    )
