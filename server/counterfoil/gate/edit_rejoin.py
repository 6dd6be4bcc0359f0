"""An edit whose `new` text runs on past its `old` text and rejoins the file.

Asked for an edit, a small model often writes its `new` text on past the lines it names in
`old`, copying the lines that follow them as the file has them (to the end of the block, or
of the file). Applied as written, those lines then appear twice, and a JSON or Python file
no longer parses. When the edit as written would break a file that parses, and `new` ends
with whole lines the file holds once after `old` (at least `MIN_REJOIN_LINES` of them, with
text of the model's own before them), the edit is read as replacing `old` through those lines:
`old` widened to where the model's text rejoins the file. The caller keeps that reading only
when the file then parses; the person sees the exact resulting diff, as for any edit, and the
receipt holds the widened `old`."""

from __future__ import annotations

from dataclasses import dataclass

MIN_REJOIN_LINES = 2  # non-blank lines the model's text and the file must share


@dataclass(frozen=True)
class Rejoined:
    """`old` widened through the file's lines that `new` ends with, the file's text once the
    edit is read so, and the line of the file where the widened `old` ends."""

    old: str
    text: str
    through_line: int


def rejoined(text: str, old: str, new: str) -> Rejoined | None:
    """The edit of `old` (which occurs once in `text`) read as running on to where `new`
    rejoins the file, or None when `new` ends with no such run of the file's lines."""
    start = text.find(old)
    if not old or start == -1:
        return None
    end = start + len(old)
    rest = text[end:]
    for cut in _line_starts(new):  # the longest tail of `new` first
        tail = new[cut:]
        if sum(1 for line in tail.splitlines() if line.strip()) < MIN_REJOIN_LINES:
            return None  # every shorter tail has fewer lines still
        at = rest.find(tail)
        if at == -1 or rest.find(tail, at + 1) != -1:
            continue
        if not _starts_line(text, end + at):
            continue
        joined = at + len(tail)
        if joined < len(rest) and not tail.endswith("\n") and rest[joined] != "\n":
            continue  # the run must end where a line of the file ends
        widened = old + rest[:joined]
        through = text.count("\n", 0, end + joined - (1 if tail.endswith("\n") else 0)) + 1
        return Rejoined(widened, text[:start] + new + rest[joined:], through)
    return None


def _line_starts(new: str) -> list[int]:
    """Where each line of `new` after its first starts: a tail of the model's text that leaves
    some of its own text before it."""
    return [index + 1 for index, char in enumerate(new[:-1]) if char == "\n"]


def _starts_line(text: str, index: int) -> bool:
    return index == 0 or text[index - 1] == "\n"
