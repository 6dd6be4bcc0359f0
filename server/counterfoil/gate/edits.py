"""Where edit_file's `old` text sits: exactly once, counting occurrences that overlap; and,
when it does not, how often it does and which lines of the file come closest."""

from __future__ import annotations

import difflib

from ..errors import AgentError, DetailedRefusal
from ..step_facts import MAX_SHOWN_DIFFERENCES, Difference, EditMiss

EDIT_RULE = "old text must occur exactly once"
MAX_COUNTED = 100  # occurrences counted for the model's message
MAX_COMPARED_LINES = 2_000  # a longer file is not searched for its closest lines


def occurrences(text: str, old: str, stop_at: int = 2) -> int:
    """How many times `old` starts in `text` (`'aa'` twice in `'aaa'`), counted up to stop_at."""
    count, start = 0, text.find(old)
    while start != -1 and count < stop_at:
        count += 1
        start = text.find(old, start + 1)
    return count


def apply_edit(text: str, old: str, new: str, path: str = "") -> str:
    """`text` with its one occurrence of `old` replaced by `new`."""
    if not old:
        raise AgentError(EDIT_RULE)
    found = occurrences(text, old, MAX_COUNTED)
    if found != 1:
        raise DetailedRefusal(EDIT_RULE, edit_miss(path, text, old, found))
    return text.replace(old, new, 1)


def edit_miss(path: str, text: str, old: str, found: int) -> EditMiss:
    """Why `old` is not in `text` exactly once: where it repeats, or the closest lines."""
    if found > 1:
        starts: list[int] = []
        start = text.find(old)
        while start != -1 and len(starts) < found:
            starts.append(text.count("\n", 0, start) + 1)
            start = text.find(old, start + 1)
        return EditMiss(path, found, at_lines=tuple(starts))
    lines = text.splitlines()
    if not lines or len(lines) > MAX_COMPARED_LINES:
        return EditMiss(path, 0)
    wanted = old.strip("\n")
    height = len(wanted.splitlines()) or 1
    # A window a line shorter or longer than old too: a model drops or adds blank lines.
    heights = sorted({max(1, min(size, len(lines))) for size in (height - 1, height, height + 1)})
    best, best_height, best_ratio = 0, heights[0], -1.0
    for size in heights:
        for first in range(len(lines) - size + 1):
            window = "\n".join(lines[first : first + size])
            matcher = difflib.SequenceMatcher(None, wanted, window, autojunk=False)
            if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
                continue
            ratio = matcher.ratio()
            if ratio > best_ratio:
                best, best_height, best_ratio = first, size, ratio
    closest = tuple(lines[best : best + best_height])
    return EditMiss(path, 0, best + 1, closest, differences(wanted, "\n".join(closest)))


def differences(old: str, found: str) -> tuple[Difference, ...]:
    """The spans where `old` and the file's `found` text disagree, widened to whole words so a
    model sees `"beta": false` against `"beta": "false"`, not a lone quote."""
    matcher = difflib.SequenceMatcher(None, old, found, autojunk=False)
    operations = matcher.get_opcodes()
    # Text the file has before or after the whole old text is context, not a difference (old
    # may be part of a line).
    if operations and operations[0][0] == "insert":
        operations = operations[1:]
    if operations and operations[-1][0] == "insert":
        operations = operations[:-1]
    spans: list[Difference] = []
    for kind, old_start, old_end, found_start, found_end in operations:
        if kind == "equal":
            continue
        old_start, old_end = _word_bounds(old, old_start, old_end)
        found_start, found_end = _word_bounds(found, found_start, found_end)
        span = Difference(old[old_start:old_end], found[found_start:found_end])
        if spans and spans[-1] == span:  # two changes within one word
            continue
        spans.append(span)
        if len(spans) == MAX_SHOWN_DIFFERENCES:
            break
    return tuple(spans)


def _word_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, end
