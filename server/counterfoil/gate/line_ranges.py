"""Reading a file by lines: the slice the model asked for, headed by where it sits in the file."""

from __future__ import annotations

from ..errors import AgentError
from ..step_facts import LinesShown


def check_line_range(start_line: object, end_line: object) -> tuple[int, int | None]:
    """1-based, inclusive; a missing start is line 1 and a missing end the last line."""
    for name, value in (("start_line", start_line), ("end_line", end_line)):
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            raise AgentError(f"{name} must be a positive integer")
    start = 1 if start_line is None else start_line
    assert isinstance(start, int)
    if isinstance(end_line, int) and end_line < start:
        raise AgentError("end_line must not be before start_line")
    return start, end_line if isinstance(end_line, int) else None


def render_line_range(
    text: str, start: int, end: int | None, max_bytes: int
) -> tuple[str, LinesShown | None]:
    """`[lines 1–120 of 4,210]` and then those lines, cut at whole lines to `max_bytes`; and the
    lines shown, for the step's record (None for an empty file)."""
    lines = _split_newlines(text)
    total = len(lines)
    if total == 0:
        return "[empty file]", None
    if start > total:
        raise AgentError(f"start_line is past the end of the file ({total:,} lines)")
    last = total if end is None else min(end, total)
    shown: list[str] = []
    size = 0
    for line in lines[start - 1 : last]:
        size += len(line.encode("utf-8"))
        if size > max_bytes:
            break
        shown.append(line)
    if not shown:
        raise AgentError(f"line {start:,} exceeds {max_bytes} bytes")
    stop = start + len(shown) - 1
    header = f"[lines {start:,}–{stop:,} of {total:,}"
    if stop < last:
        header += f"; cut at {max_bytes} bytes, continue from line {stop + 1:,}"
    return header + "]\n" + "".join(shown), LinesShown(start, stop, total)


def _split_newlines(text: str) -> list[str]:
    """Lines ended by \\n only, numbered as search numbers them (unlike str.splitlines)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
