"""search_files with ripgrep: its own walk on every core, then each hit checked by the read rules.

ripgrep is fastest walking and searching in parallel, when it prints each file's lines as the
file finishes (together and in order, but files in no set order). So it runs unsorted and its
output, bounded by `MAX_UNSORTED_BYTES`, is put in path order here. Only when a broad pattern's
output passes that bound does it run again with `--sort path`: one thread, but the read can
stop at the first hits. Either way every hit is checked as the walk would have: no protected
name on the way, not the receipt log, a regular UTF-8 file without NUL bytes.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..commands.orphans import own_child
from ..errors import AgentError
from .engine import SearchHit, SearchLimits, SearchScope, Watchdog, hidden_path, searchable_text

MAX_UNSORTED_BYTES = 4 * 1024 * 1024
READ_BYTES = 1 << 16


def ripgrep_argv(
    executable: str,
    pattern: str,
    literal: bool,
    limits: SearchLimits,
    start: str,
    *,
    sort: bool = False,
) -> list[str]:
    """ripgrep's arguments: no config file, no symlinks, hidden files too, git's ignore rules
    only (not .ignore/.rgignore); `sort`: files in path order (single-threaded), and files over
    the size limit left unread. The parallel run reads them too, as `rg` typed by a person
    does: `--max-filesize` costs a stat of every file its walk meets, and the few files with
    hits are checked against the limit here anyway (`_allowed`)."""
    argv = [
        executable,
        "--no-config",
        "--hidden",
        "--no-follow",
        "--no-ignore-dot",
        "--no-heading",
        "--with-filename",
        "--line-number",
        "--null",
        "--color",
        "never",
        "--no-messages",
        "--max-count",
        str(limits.max_hits + 1),
    ]
    if sort:
        argv += ["--sort", "path", "--max-filesize", str(limits.max_file_bytes)]
    if literal:
        argv.append("--fixed-strings")
    argv += ["-e", pattern]
    return argv if start == "." else [*argv, "--", start]


@dataclass
class _Run:
    """How one ripgrep run ended."""

    lines: int = 0
    timed_out: bool = False
    complete: bool = False  # read to the end, not stopped by the caller
    complaint: str = ""
    returncode: int = 0


def search_ripgrep(
    executable: str, pattern: str, literal: bool, start: str, scope: SearchScope
) -> tuple[list[SearchHit], int, str | None]:
    """Hits in path order, the number of files they were checked in, and why the search
    stopped early ("hits", "time") or None."""
    limits = scope.limits
    found: list[tuple[str, int, bytes]] = []
    size = 0

    def collect(line: bytes) -> bool:
        nonlocal size
        size += len(line)
        entry = _parse(line)
        if entry is not None:
            found.append(entry)
        return size <= MAX_UNSORTED_BYTES

    argv = ripgrep_argv(executable, pattern, literal, limits, start)
    run = _run(argv, scope, collect)
    if run.complete or run.timed_out:
        found.sort(key=lambda entry: entry[0].split("/"))  # stable: lines stay in order
        hits, checked, stopped = _checked_hits(found, scope)
        return hits, checked, stopped or ("time" if run.timed_out else None)
    return _search_sorted(
        ripgrep_argv(executable, pattern, literal, limits, start, sort=True), scope
    )


def _search_sorted(argv: list[str], scope: SearchScope) -> tuple[list[SearchHit], int, str | None]:
    hits: list[SearchHit] = []
    verdicts: dict[str, bool] = {}
    stopped: str | None = None

    def take(line: bytes) -> bool:
        nonlocal stopped
        entry = _parse(line)
        if entry is None or not _allowed(entry[0], verdicts, scope):
            return True
        if len(hits) >= scope.limits.max_hits:
            stopped = "hits"
            return False
        hits.append(_hit(entry))
        return True

    run = _run(argv, scope, take)
    return hits, len(verdicts), stopped or ("time" if run.timed_out else None)


def _checked_hits(
    found: list[tuple[str, int, bytes]], scope: SearchScope
) -> tuple[list[SearchHit], int, str | None]:
    hits: list[SearchHit] = []
    verdicts: dict[str, bool] = {}
    for entry in found:
        if not _allowed(entry[0], verdicts, scope):
            continue
        if len(hits) >= scope.limits.max_hits:
            return hits, len(verdicts), "hits"
        hits.append(_hit(entry))
    return hits, len(verdicts), None


def _allowed(relative: str, verdicts: dict[str, bool], scope: SearchScope) -> bool:
    """The walk's rules for a file ripgrep reached on its own (decided once per file)."""
    if relative not in verdicts:
        verdicts[relative] = not hidden_path(relative, scope.hidden) and (
            searchable_text(scope.root, relative, scope.limits.max_file_bytes) is not None
        )
    return verdicts[relative]


def _parse(line: bytes) -> tuple[str, int, bytes] | None:
    name, _, rest = line.partition(b"\0")
    number, _, text = rest.partition(b":")
    if not number.isdigit():  # a file name with a newline in it; such a file is skipped
        return None
    return os.fsdecode(name), int(number), text


def _hit(entry: tuple[str, int, bytes]) -> SearchHit:
    relative, number, text = entry
    return SearchHit(relative, number, text.decode("utf-8"))


def _run(argv: list[str], scope: SearchScope, take: Callable[[bytes], bool]) -> _Run:
    """Run ripgrep in the root and pass each output line to `take` until it returns False,
    the output ends, or the deadline passes (a watchdog kills ripgrep, which ends the read)."""
    run = _Run()
    with own_child() as note:  # its own session: not an orphan of a command
        process = subprocess.Popen(
            argv,
            cwd=scope.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        note(process.pid)
    assert process.stdout is not None and process.stderr is not None
    output = process.stdout.fileno()
    watchdog = Watchdog(process, max(scope.deadline - time.monotonic(), 0.0))
    pending = bytearray()
    try:
        while True:
            chunk = os.read(output, READ_BYTES)
            if not chunk:
                run.timed_out = watchdog.fired
                run.complete = not run.timed_out and (not pending or take(bytes(pending)))
                break
            pending += chunk
            if b"\n" not in chunk:
                continue
            *lines, rest = pending.split(b"\n")
            pending = bytearray(rest)
            run.lines += len(lines)
            if not all(take(bytes(line)) for line in lines):
                break
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
        process.stdout.close()
        run.complaint = process.stderr.read(2000).decode("utf-8", "replace").strip()
        process.stderr.close()
        run.returncode = process.wait()
    if run.complete and run.returncode == 2 and not run.lines and run.complaint:
        # With --no-messages ripgrep only speaks of fatal errors, such as a pattern it refuses.
        raise AgentError(f"search failed: {run.complaint.splitlines()[-1]}")
    return run
