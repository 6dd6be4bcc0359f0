"""Searching file contents under the root with ripgrep, or in Python with the same hits.

ripgrep walks the tree itself (that is its speed), with arguments built here (the model's
pattern is one `-e` value): no config file, no symlinks followed, hidden files included, git's
ignore rules in a checkout; its hits are put in path order (ripgrep.py). Every hit it reports
is then checked in Python against the read rules (no protected name on the way, not the
receipt log, a regular UTF-8 file without NUL bytes, opened without following a symlink). The
Python engine walks with the same rules, asks git for its ignore rules, and searches line by
line in a worker process the time limit can kill (worker.py), so both give the same
hits in the same order and neither outlives the limit. Patterns are limited to the dialect Rust's `regex` and
Python's `re` read alike. One known difference: ripgrep 13 cannot be told to disregard
`.rgignore` files, so what they list is left out by ripgrep and searched by Python.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable
from contextlib import ExitStack, closing
from pathlib import Path
from typing import IO

from ..commands.orphans import own_child
from ..errors import AgentError
from ..files.files import open_directory
from .scope import (
    SearchHit,
    SearchLimits,
    SearchResult,
    SearchScope,
    Watchdog,
    searchable_bytes,
)

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
    ("(?#", "comments"),
)
# Escapes both read alike: metacharacters, and the classes and controls both know.
_SHARED_ESCAPES = frozenset("\\.+*?()|[]{}^$#&-~dDwWsSbBtfvr")
_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z-]*)[:)]")
_METACHARACTERS = frozenset("\\.^$*+?{}[]()|")
MAX_PATTERN_CHARS = 500
WORKER = Path(__file__).with_name("worker.py")


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
            if following not in _SHARED_ESCAPES and not _escaped(pattern, index):
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


def walk_files(start: Path, scope: SearchScope) -> tuple[list[str], str | None]:
    """Root-relative paths of the regular files under `start`, in ripgrep's `--sort path` order.

    A hidden directory is not entered. Kinds come from the directory entries (no stat per
    file); the size limit is applied when a file is read.
    """
    root, hidden, limits = scope.root, scope.hidden, scope.limits
    visible = _git_visible_paths(root)
    visible_directories = None if visible is None else _parent_directories(visible)
    if start.is_file():
        relative = start.relative_to(root).as_posix()
        return ([relative] if visible is None or relative in visible else []), None
    found: list[str] = []
    prefix = start.relative_to(root).as_posix()
    stack: list[tuple[str, str]] = [(str(start), "" if prefix == "." else prefix + "/")]
    while stack:
        if time.monotonic() > scope.deadline:
            return _in_path_order(found), "time"
        directory, relative_prefix = stack.pop()
        try:
            with os.scandir(directory) as scan:
                entries = list(scan)
        except OSError:
            continue
        for entry in entries:
            relative = relative_prefix + entry.name
            if hidden(relative):
                continue
            try:
                is_directory = entry.is_dir(follow_symlinks=False)
                is_file = not is_directory and entry.is_file(follow_symlinks=False)
            except OSError:
                continue
            if is_directory:
                if visible_directories is None or relative in visible_directories:
                    stack.append((entry.path, relative + "/"))
            elif is_file:
                if visible is not None and relative not in visible:
                    continue
                if len(found) >= limits.max_files:
                    return _in_path_order(found), "files"
                found.append(relative)
    return _in_path_order(found), None


def _in_path_order(paths: list[str]) -> list[str]:
    """Depth first, each directory's entries by name: the order `rg --sort path` prints."""
    return sorted(paths, key=lambda path: path.split("/"))


def _git_visible_paths(root: Path) -> frozenset[str] | None:
    """Tracked and untracked-but-not-ignored files, when the root is in a git checkout.

    These are the rules ripgrep applies in a checkout (.gitignore files, info/exclude, the
    global excludes file). git runs with its fsmonitor hook off, so no repository setting can
    start a program. None (no ignore rules) when the root is not in a checkout or git fails.
    """
    git = shutil.which("git")
    if git is None:
        return None
    try:
        listed = subprocess.run(
            [
                git,
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.untrackedCache=false",
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            cwd=root,
            capture_output=True,
            timeout=10,
            check=True,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return frozenset(os.fsdecode(item) for item in listed.stdout.split(b"\0") if item)


def _parent_directories(paths: frozenset[str]) -> frozenset[str]:
    directories: set[str] = set()
    for path in paths:
        parent = path.rpartition("/")[0]
        while parent and parent not in directories:
            directories.add(parent)
            parent = parent.rpartition("/")[0]
    return frozenset(directories)


def searchable_files(
    root: Path, files: Iterable[str], limit: int
) -> Generator[tuple[str, bytes | None], None, None]:
    """Each file with its bytes when it may hold text (or None), read as `searchable_text`
    reads one, but each folder opened once for the files that follow each other in it (path
    order); the UTF-8 check is left to the worker, which decodes them anyway."""
    current: tuple[str, ...] | None = None
    opened = ExitStack()
    directory: int | None = None
    with opened:
        for relative in files:
            parts = tuple(relative.split("/"))
            if parts[:-1] != current:
                opened.close()
                current, directory = parts[:-1], None
                try:
                    directory = opened.enter_context(open_directory(root, current))
                except (AgentError, OSError):
                    pass
            yield (
                relative,
                None if directory is None else searchable_bytes(directory, parts[-1], limit),
            )


def required_text(pattern: str, literal: bool) -> bytes | None:
    """Bytes that every match contains (the pattern's leading plain text), so that a file
    without them is not sent to the worker at all; None when no such text is known (an
    alternation, a flag, a class or a group first)."""
    if literal:
        return pattern.encode("utf-8")
    if "|" in pattern:
        return None
    prefix = ""
    for character in pattern:
        if character in _METACHARACTERS:
            if character in "?*{":  # the character before it may be absent
                prefix = prefix[:-1]
            break
        prefix += character
    return prefix.encode("utf-8") or None


def search_python(
    scope: SearchScope, start: Path, pattern: re.Pattern[str], required: bytes | None = None
) -> SearchResult:
    """Walk `start` and match its files in a worker process (worker.py) that the time
    limit kills, since a backtracking match cannot be interrupted in this one. The worker's
    interpreter starts while the tree is walked; a file without the `required` bytes is
    ruled out here."""
    with own_child() as note:  # its own session: not an orphan of a command
        worker = subprocess.Popen(
            [sys.executable, "-I", "-S", str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        note(worker.pid)
    assert worker.stdin is not None and worker.stdout is not None
    watchdog = Watchdog(worker, max(scope.deadline - time.monotonic(), 0.0))
    feeder: threading.Thread | None = None
    try:
        files, walk_stopped = walk_files(start, scope)
        sent: list[str] = []
        feeder = threading.Thread(
            target=_feed_worker,
            args=(worker.stdin, scope, files, pattern, required, sent),
            daemon=True,
        )
        feeder.start()
        hits, stopped, answered = _worker_hits(worker.stdout, sent, scope.limits.max_hits)
    finally:
        watchdog.cancel()
        if worker.poll() is None:
            worker.kill()
        worker.stdout.close()
        worker.wait()
        if feeder is not None:
            feeder.join()
        else:
            worker.stdin.close()
    if stopped is None and (watchdog.fired or time.monotonic() > scope.deadline):
        stopped = "time"
    elif stopped is None and answered != len(files):
        raise AgentError("search failed: the matching process ended early")
    return SearchResult(tuple(hits), len(files), stopped or walk_stopped)


def _worker_hits(
    answers: IO[bytes], sent: list[str], max_hits: int
) -> tuple[list[SearchHit], str | None, int | None]:
    """The worker's hits, up to `max_hits` ("hits" when there were more), and the number of
    files it said it answered (None when it ended before saying)."""
    hits: list[SearchHit] = []
    for answer in answers:
        decoded = json.loads(answer)
        if isinstance(decoded, dict):
            return hits, None, int(decoded["answered"])
        index, lines = decoded
        for number, line in lines:
            if len(hits) >= max_hits:
                return hits, "hits", None
            hits.append(SearchHit(sent[index], number, line))
    return hits, None, None


def _feed_worker(
    stream: IO[bytes],
    scope: SearchScope,
    files: list[str],
    pattern: re.Pattern[str],
    required: bytes | None,
    sent: list[str],
) -> None:
    """Send the request, then each file's text (read under the read rules) until the deadline."""
    request = {
        "pattern": pattern.pattern,
        "flags": pattern.flags,
        "max_hits": scope.limits.max_hits,
    }
    try:
        stream.write(json.dumps(request).encode() + b"\n")
        with closing(searchable_files(scope.root, files, scope.limits.max_file_bytes)) as read:
            for relative, data in read:
                if time.monotonic() > scope.deadline:
                    break
                sent.append(relative)
                if data is None or (required is not None and required not in data):
                    stream.write(b"-1\n")
                else:
                    stream.write(b"%d\n" % len(data) + data)
        stream.close()
    except (OSError, ValueError):  # the worker was stopped (hits, time) first
        pass


def search_tree(
    root: Path,
    start: Path,
    pattern: str,
    *,
    literal: bool,
    hidden: Callable[[str], bool],
    limits: SearchLimits,
    engine: str = "auto",
) -> SearchResult:
    """Hits for `pattern` under `start`, in path order; `engine` is auto, ripgrep or python.

    ripgrep walks by itself (that is where its speed comes from) and every hit is checked
    against `hidden` and the text rule; its walk is bounded by the time budget, not by
    `max_files`, which bounds the Python walk.
    """
    compiled = compile_pattern(pattern, literal)
    scope = SearchScope(root, hidden, limits, time.monotonic() + limits.max_seconds)
    executable = shutil.which("rg") if engine in ("auto", "ripgrep") else None
    if engine == "ripgrep" and executable is None:
        raise AgentError("ripgrep is not installed")
    if executable is not None:
        from .ripgrep import search_ripgrep

        relative_start = start.relative_to(root).as_posix()
        hits, scanned, stopped = search_ripgrep(executable, pattern, literal, relative_start, scope)
        return SearchResult(tuple(hits), scanned, stopped)
    return search_python(scope, start, compiled, required_text(pattern, literal))
