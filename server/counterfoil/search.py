"""Searching file contents under the root: one walk decides which files, an engine finds lines.

The walk applies the same rules as reads (no symlinks, no protected names, not the receipt log,
regular files only, git's ignore rules when the root is a git checkout), so ripgrep never walks
on its own: it is handed the chosen files, with arguments built here and the model's pattern
passed as one `-e` value. A pure-Python engine gives the same hits when ripgrep is absent.
A file is searched only when it has no NUL byte and is valid UTF-8; both engines check that
in Python. Patterns are limited to the dialect Rust's `regex` and Python's `re` agree on.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import AgentError
from .files import READ_FLAGS

# Constructs one engine knows and the other does not (or reads differently).
_UNSHARED_SYNTAX = (
    ("(?=", "look-around"),
    ("(?!", "look-around"),
    ("(?<=", "look-around"),
    ("(?<!", "look-around"),
    ("(?P=", "back-references"),
    ("(?>", "atomic groups"),
    ("{,", "{,n} repetition"),
    ("[[:", "POSIX classes"),
)
_UNSHARED_ESCAPES = frozenset("123456789gkpPAzZuUnxe")
_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z-]*)[:)]")
MAX_PATTERN_CHARS = 500
# Files passed to one ripgrep process, so the command line stays far below ARG_MAX.
_ARGUMENT_BYTES_PER_RUN = 96 * 1024


@dataclass(frozen=True)
class SearchLimits:
    max_hits: int = 100
    max_line_chars: int = 200
    max_files: int = 20_000
    max_seconds: float = 10.0
    max_file_bytes: int = 4 * 1024 * 1024


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
        lines = [f"{hit.path}:{hit.line}: {_shorten(hit.text, max_line_chars)}" for hit in self.hits]
        if not lines:
            lines.append("(no matches)")
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


def compile_pattern(pattern: object, literal: bool) -> re.Pattern[str]:
    """The pattern as both engines will read it, or the reason it is refused.

    It is compiled with MULTILINE so that one search of a whole file can rule the file out:
    in the shared dialect a line that matches alone also matches inside the file.
    """
    if not isinstance(pattern, str) or not pattern:
        raise AgentError("pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise AgentError(f"pattern exceeds {MAX_PATTERN_CHARS} characters")
    if "\n" in pattern or "\r" in pattern or "\0" in pattern:
        raise AgentError("pattern must be one line")
    if literal:
        return re.compile(re.escape(pattern), re.MULTILINE)
    for marker, name in _UNSHARED_SYNTAX:
        if marker in pattern:
            raise AgentError(f"pattern uses {name}, which search does not support")
    for index, character in enumerate(pattern):
        if character == "\\" and index + 1 < len(pattern):
            following = pattern[index + 1]
            if following in _UNSHARED_ESCAPES and not _escaped(pattern, index):
                raise AgentError(f"pattern escape \\{following} is not supported")
    for flags in _INLINE_FLAGS.findall(pattern):
        if set(flags) - set("is-"):
            raise AgentError("pattern flags other than i and s are not supported")
    if "&&" in pattern or "~~" in pattern or "--" in pattern and "[" in pattern:
        raise AgentError("pattern uses class set operations, which search does not support")
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as error:
        raise AgentError(f"pattern is not a valid regular expression: {error}") from None


def _escaped(pattern: str, index: int) -> bool:
    """Whether the backslash at `index` is itself escaped by an odd run of backslashes."""
    run = 0
    while index - run - 1 >= 0 and pattern[index - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def walk_files(
    start: Path,
    root: Path,
    excluded: Callable[[str, Path], bool],
    limits: SearchLimits,
    deadline: float,
) -> tuple[list[str], str | None]:
    """Root-relative paths of the regular files under `start`, sorted depth first.

    `excluded(name, path)` is the caller's rule for names and paths the agent may not see.
    """
    visible = _git_visible_paths(root)
    visible_directories = None if visible is None else _parent_directories(visible)
    found: list[str] = []
    root_text = str(root)

    def relative(path: str) -> str:
        return os.path.relpath(path, root_text).replace(os.sep, "/")

    if start.is_file():
        rel = relative(str(start))
        if visible is None or rel in visible:
            found.append(rel)
        return found, None
    stack: list[str] = [str(start)]
    while stack:
        if time.monotonic() > deadline:
            return found, "time"
        directory = stack.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        subdirectories: list[str] = []
        for entry in entries:
            if excluded(entry.name, Path(entry.path)):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = relative(entry.path)
            if stat.S_ISDIR(info.st_mode):
                if visible_directories is None or rel in visible_directories:
                    subdirectories.append(entry.path)
            elif stat.S_ISREG(info.st_mode) and info.st_size <= limits.max_file_bytes:
                if visible is not None and rel not in visible:
                    continue
                if len(found) >= limits.max_files:
                    return found, "files"
                found.append(rel)
        stack.extend(reversed(subdirectories))
    return found, None


def _git_visible_paths(root: Path) -> frozenset[str] | None:
    """Tracked and untracked-but-not-ignored files, when the root is a git checkout.

    git runs with its fsmonitor hook switched off, so no repository setting can start a
    program. None (no ignore rules applied) when the root is not a checkout or git fails.
    """
    git = shutil.which("git")
    if git is None or not os.path.lexists(root / ".git"):
        return None
    try:
        listed = subprocess.run(
            [git, "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
             "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, capture_output=True, timeout=10, check=True,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return frozenset(
        os.fsdecode(item) for item in listed.stdout.split(b"\0") if item
    )


def _parent_directories(paths: frozenset[str]) -> frozenset[str]:
    directories: set[str] = set()
    for path in paths:
        parent = path.rpartition("/")[0]
        while parent and parent not in directories:
            directories.add(parent)
            parent = parent.rpartition("/")[0]
    return frozenset(directories)


def searchable_text(root: Path, relative: str, limit: int) -> str | None:
    """The file's text when it is a regular UTF-8 file without NUL bytes; never blocks."""
    try:
        fd = os.open(root / relative, READ_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                return None
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def search_python(
    root: Path, files: list[str], pattern: re.Pattern[str], limits: SearchLimits,
    deadline: float,
) -> tuple[list[SearchHit], str | None]:
    hits: list[SearchHit] = []
    for relative in files:
        if time.monotonic() > deadline:
            return hits, "time"
        text = searchable_text(root, relative, limits.max_file_bytes)
        if text is None or pattern.search(text) is None:
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            if pattern.search(line):
                if len(hits) >= limits.max_hits:
                    return hits, "hits"
                hits.append(SearchHit(relative, number, line))
    return hits, None


def ripgrep_argv(executable: str, pattern: str, literal: bool, max_hits: int) -> list[str]:
    """ripgrep's arguments: no config file, no walking of its own, no symlinks, one thread."""
    argv = [
        executable, "--no-config", "--no-ignore", "--no-follow", "--hidden", "--threads", "1",
        "--no-heading", "--with-filename", "--line-number", "--null", "--color", "never",
        "--no-messages", "--max-count", str(max_hits + 1),
    ]
    if literal:
        argv.append("--fixed-strings")
    return [*argv, "-e", pattern, "--"]


def search_ripgrep(
    executable: str, root: Path, files: list[str], pattern: str, literal: bool,
    limits: SearchLimits, deadline: float,
) -> tuple[list[SearchHit], str | None]:
    hits: list[SearchHit] = []
    checked: dict[str, bool] = {}
    for batch in _batches(files):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return hits, "time"
        for relative, number, text in _ripgrep_lines(
            executable, root, batch, pattern, literal, limits, remaining
        ):
            if relative not in checked:
                checked[relative] = (
                    searchable_text(root, relative, limits.max_file_bytes) is not None
                )
            if not checked[relative]:
                continue
            if len(hits) >= limits.max_hits:
                return hits, "hits"
            hits.append(SearchHit(relative, number, text))
        if time.monotonic() > deadline:
            return hits, "time"
    return hits, None


def _batches(files: list[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for relative in files:
        if batch and size + len(relative) + 1 > _ARGUMENT_BYTES_PER_RUN:
            yield batch
            batch, size = [], 0
        batch.append(relative)
        size += len(relative) + 1
    if batch:
        yield batch


def _ripgrep_lines(
    executable: str, root: Path, batch: list[str], pattern: str, literal: bool,
    limits: SearchLimits, timeout: float,
) -> Iterator[tuple[str, int, str]]:
    argv = ripgrep_argv(executable, pattern, literal, limits.max_hits)
    process = subprocess.Popen(
        [*argv, *batch], cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )
    assert process.stdout is not None
    timer = _Watchdog(process, timeout)
    try:
        for raw in process.stdout:
            name, _, rest = raw.partition(b"\0")
            number, _, text = rest.partition(b":")
            try:
                yield os.fsdecode(name), int(number), text.rstrip(b"\n").decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                continue
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
        process.stdout.close()
        process.wait()


class _Watchdog:
    """Kills a process that outlives its share of the time budget."""

    def __init__(self, process: subprocess.Popen[bytes], timeout: float) -> None:
        import threading

        self._timer = threading.Timer(timeout, self._kill, args=(process,))
        self._timer.daemon = True
        self._timer.start()

    @staticmethod
    def _kill(process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            process.kill()

    def cancel(self) -> None:
        self._timer.cancel()


def search_tree(
    root: Path,
    start: Path,
    pattern: str,
    *,
    literal: bool,
    excluded: Callable[[str, Path], bool],
    limits: SearchLimits,
    engine: str = "auto",
) -> SearchResult:
    """Hits for `pattern` under `start`, in walk order; `engine` is auto, ripgrep or python."""
    compiled = compile_pattern(pattern, literal)
    deadline = time.monotonic() + limits.max_seconds
    files, walk_stopped = walk_files(start, root, excluded, limits, deadline)
    executable = shutil.which("rg") if engine in ("auto", "ripgrep") else None
    if engine == "ripgrep" and executable is None:
        raise AgentError("ripgrep is not installed")
    if executable is not None:
        hits, stopped = search_ripgrep(executable, root, files, pattern, literal, limits,
                                       deadline)
    else:
        hits, stopped = search_python(root, files, compiled, limits, deadline)
    return SearchResult(tuple(hits), len(files), stopped or walk_stopped)
