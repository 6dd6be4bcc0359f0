"""Where edit_file's `old` text sits: exactly once, counting occurrences that overlap."""

from __future__ import annotations

from ..errors import AgentError


def occurrences(text: str, old: str, stop_at: int = 2) -> int:
    """How many times `old` starts in `text` (`'aa'` twice in `'aaa'`), counted up to stop_at."""
    count, start = 0, text.find(old)
    while start != -1 and count < stop_at:
        count += 1
        start = text.find(old, start + 1)
    return count


def apply_edit(text: str, old: str, new: str) -> str:
    """`text` with its one occurrence of `old` replaced by `new`."""
    if not old or occurrences(text, old) != 1:
        raise AgentError("old text must occur exactly once")
    return text.replace(old, new, 1)
