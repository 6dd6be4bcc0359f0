"""What both search engines share: the limits, the scope searched within, the hits, and the
rules a hit passes (no hidden directory on the way, a regular UTF-8 file without NUL bytes)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import AgentError
from ..files.files import open_directory, read_regular_file

NO_MATCHES = "(no matches)"  # a search's whole observation when nothing matched


@dataclass(frozen=True)
class SearchLimits:
    max_hits: int = 100
    max_line_chars: int = 200
    max_files: int = 20_000
    max_seconds: float = 10.0
    max_file_bytes: int = 4 * 1024 * 1024


@dataclass(frozen=True)
class SearchScope:
    """What both engines search within: the root, the caller's rule for what the agent may not
    see (`hidden(relative_path)`), the limits, and the monotonic time to stop at."""

    root: Path
    hidden: Callable[[str], bool]
    limits: SearchLimits
    deadline: float


@dataclass(frozen=True)
class SearchHit:
    path: str
    line: int
    text: str


@dataclass(frozen=True)
class SearchResult:
    hits: tuple[SearchHit, ...]
    files_scanned: int
    stopped: str | None  # why the search ended early: "hits", "files", "time"; None: complete

    def observation(self, max_line_chars: int) -> str:
        lines = [
            f"{hit.path}:{hit.line}: {_shorten(hit.text, max_line_chars)}" for hit in self.hits
        ]
        if not lines:
            lines.append(NO_MATCHES)
        if self.stopped == "hits":
            lines.append(f"[first {len(self.hits)} hits; narrow the pattern or the path for more]")
        elif self.stopped == "files":
            lines.append(f"[stopped after {self.files_scanned} files; give a narrower path]")
        elif self.stopped == "time":
            lines.append("[stopped at the time limit; give a narrower path]")
        return "\n".join(lines)


def _shorten(text: str, limit: int) -> str:
    text = text.rstrip()
    return text if len(text) <= limit else text[:limit] + "…"


def searchable_text(root: Path, relative: str, limit: int) -> str | None:
    """The file's text when it is a regular UTF-8 file without NUL bytes.

    Opened as reads open files (one directory at a time, no symlink anywhere on the way,
    FIFOs refused without blocking), so a path swapped for a symlink after the walk is skipped.
    """
    parts = tuple(relative.split("/"))
    try:
        with open_directory(root, parts[:-1]) as directory:
            data = searchable_bytes(directory, parts[-1], limit)
        return None if data is None else data.decode("utf-8")
    except (AgentError, OSError, UnicodeDecodeError):
        return None


def searchable_bytes(directory: int, name: str, limit: int) -> bytes | None:
    """A file's bytes when it may hold text: regular, within `limit`, without NUL bytes (a
    binary file is left at its first block with one). Whether they are UTF-8 is the reader's
    check."""
    try:
        return read_regular_file(directory, name, limit, refuse_nul=True)
    except (AgentError, OSError):
        return None


def hidden_path(relative: str, hidden: Callable[[str], bool]) -> bool:
    """The walk's rule for every directory on the way, as ripgrep walked there on its own."""
    parts = relative.split("/")
    return any(hidden("/".join(parts[: index + 1])) for index in range(len(parts)))


class Watchdog:
    """Kills a process that outlives its share of the time budget."""

    def __init__(self, process: subprocess.Popen[bytes], timeout: float) -> None:
        self.fired = False
        self._timer = threading.Timer(timeout, self._kill, args=(process,))
        self._timer.daemon = True
        self._timer.start()

    def _kill(self, process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            self.fired = True
            process.kill()

    def cancel(self) -> None:
        self._timer.cancel()
