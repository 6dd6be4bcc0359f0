"""A path as a person or the model is shown it: one line, whatever bytes its name holds.

A file name may hold any byte but `/` and NUL. A newline in one starts a line of its own in an
approval or an observation (`left alone: deploy.sh …` forged by a file named so), a carriage
return or an escape sequence rewrites what is already on the terminal, a bidi control reorders
it, and an invisible character makes two names look one. Every place that shows a path shows
`shown_path(path)`: control characters (C0, DEL, C1) and the bytes a name held that are not
UTF-8 (surrogate-escaped) become `\\xNN`, invisible characters (`INVISIBLE`: bidi controls,
zero-width and default-ignorable ones) and the Unicode line and paragraph separators
`<U+NNNN>`. The path itself (in records, URIs,
file operations) is never changed.
"""

from __future__ import annotations

_CONTROLS = [*range(0x20), *range(0x7F, 0xA0)]
_NOT_UTF8 = range(0xDC80, 0xDD00)  # os.fsdecode's surrogate escapes of bytes 0x80-0xFF
# What shows as nothing (or a blank) yet changes what a text says or which name it is: Unicode's
# default-ignorable code points (soft hyphen, combining grapheme joiner, Hangul and halfwidth
# fillers, Khmer and Mongolian invisibles, zero-width spaces and joiners, the bidi controls and
# marks, word joiner and invisible operators, variation selectors, the BOM, tags) and the
# braille blank. Every question, terminal line and editor view shows them as `<U+NNNN>`.
INVISIBLE: tuple[int, ...] = (
    0x00AD,
    0x034F,
    0x061C,
    0x115F,
    0x1160,
    0x17B4,
    0x17B5,
    *range(0x180B, 0x1810),
    *range(0x200B, 0x2010),
    *range(0x202A, 0x202F),
    *range(0x2060, 0x2070),
    0x2800,
    0x3164,
    *range(0xFE00, 0xFE10),
    0xFEFF,
    0xFFA0,
    *range(0xFFF0, 0xFFF9),
    *range(0x1BCA0, 0x1BCA4),
    *range(0x1D173, 0x1D17B),
    *range(0xE0000, 0xE1000),
)
_MARKS = [*INVISIBLE, 0x2028, 0x2029]
_SHOWN: dict[int, str] = (
    {code: f"\\x{code:02x}" for code in _CONTROLS}
    | {code: f"\\x{code - 0xDC00:02x}" for code in _NOT_UTF8}
    | {code: f"<U+{code:04X}>" for code in _MARKS}
)


def shown_path(path: str) -> str:
    """`path` with every character that could start a line or steer a terminal made visible."""
    return path.translate(_SHOWN)
