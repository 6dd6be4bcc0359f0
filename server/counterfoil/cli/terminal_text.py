"""Text for a terminal, with every character that could steer the terminal made visible.

Model-chosen text (diffs, paths, argv, observations, tokens, answers) could otherwise erase
or rewrite what the person is approving: `ESC[2K` clears a line of the diff, a bidi override
reorders it, an invisible character hides a word. Control characters (C0 except newline and
tab, DEL, C1) become `\\xNN`; invisible ones (`INVISIBLE`, the table `shown_path` uses too:
bidi controls, zero-width, variation selectors, fillers, every default-ignorable code point)
become `<U+NNNN>`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO, cast

from ..files.path_text import INVISIBLE

_CONTROLS = [code for code in range(0x20) if chr(code) not in "\n\t"] + list(range(0x7F, 0xA0))
_VISIBLE: dict[int, str] = {code: f"\\x{code:02x}" for code in _CONTROLS} | {
    code: f"<U+{code:04X}>" for code in INVISIBLE
}


def terminal_safe(text: str) -> str:
    return text.translate(_VISIBLE)


# The colours the CLI itself paints diff lines with (reset, bold, red, green, cyan).
OWN_STYLES = frozenset({"0", "1", "31", "32", "36"})


class TerminalSafeStream:
    """A text stream that shows, instead of obeys, whatever control characters it is given."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(terminal_safe(text))

    def write_style(self, code: str) -> None:
        """Switch the terminal to one of the CLI's own colours; nothing else passes unescaped."""
        if code not in OWN_STYLES:
            raise ValueError(f"not a colour of the CLI: {code!r}")
        self._stream.write(f"\x1b[{code}m")

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        try:
            return bool(self._stream.isatty())
        except (AttributeError, ValueError):
            return False


def terminal_safe_stream(stream: TextIO) -> TextIO:
    """`stream`, escaping everything written to it; every CLI print goes through one."""
    return cast(TextIO, TerminalSafeStream(stream))
