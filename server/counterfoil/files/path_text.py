"""A path as a person or the model is shown it: one line, whatever bytes its name holds.

A file name may hold any byte but `/` and NUL. A newline in one starts a line of its own in an
approval or an observation (`left alone: deploy.sh …` forged by a file named so), a carriage
return or an escape sequence rewrites what is already on the terminal, a bidi control reorders
it. Every place that shows a path shows `shown_path(path)`: control characters (C0, DEL, C1)
and the bytes a name held that are not UTF-8 (surrogate-escaped) become `\\xNN`, bidi controls
and the Unicode line and paragraph separators `<U+NNNN>`. The path itself (in records, URIs,
file operations) is never changed.
"""

from __future__ import annotations

_CONTROLS = [*range(0x20), *range(0x7F, 0xA0)]
_NOT_UTF8 = range(0xDC80, 0xDD00)  # os.fsdecode's surrogate escapes of bytes 0x80-0xFF
_MARKS = [0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_SHOWN: dict[int, str] = (
    {code: f"\\x{code:02x}" for code in _CONTROLS}
    | {code: f"\\x{code - 0xDC00:02x}" for code in _NOT_UTF8}
    | {code: f"<U+{code:04X}>" for code in _MARKS}
)


def shown_path(path: str) -> str:
    """`path` with every character that could start a line or steer a terminal made visible."""
    return path.translate(_SHOWN)
