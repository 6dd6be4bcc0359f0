"""A test-only fault hook: the durable steps of a process (each fsync, each rename), named by
the file they make durable, and a crash (`os._exit`, no cleanup, no `finally`) right after the
k-th of them, in the manner of ALICE and CrashMonkey.

Run as a program: `python crash_points.py TRACE K -- counterfoil arguments…` runs the CLI in
this process with the hook installed; K=0 only writes the trace (one label per line).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

CRASH_STATUS = 137


def label(path: str) -> str:
    """Which durable step a path belongs to, in the words of the crash-point sweep."""
    name = os.path.basename(path)
    if "/intents" in path:
        return "intent written"
    if "/sessions/" in path or path.endswith("/sessions"):
        return "checkpoint written"
    if "/objects" in path:
        return "object stored"
    if name.endswith(".head") or name.startswith(".receipts.jsonl.head"):
        return "head replaced"
    if name.endswith(".jsonl"):
        return "receipt appended"
    if name.startswith(".cf-"):
        return "temporary file fsynced"
    return "file renamed" if os.path.isfile(path) else "folder fsynced"


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "?"


def install(trace: Path, crash_at: int) -> None:
    """Count every fsync and rename from now on; write each one's label to `trace`, and end
    the process right after step `crash_at` (0: never)."""
    steps = 0
    out = trace.open("a", encoding="utf-8")

    def after(what: str) -> None:
        nonlocal steps
        steps += 1
        out.write(what + "\n")
        out.flush()
        if steps == crash_at:
            os._exit(CRASH_STATUS)

    real_fsync, real_rename, real_replace = os.fsync, os.rename, os.replace

    def fsync(fd: int) -> None:
        real_fsync(fd)
        after(label(_fd_path(fd)))

    def moved(real: Callable[..., None]) -> Callable[..., None]:
        def rename(source: Any, target: Any, **kwargs: Any) -> None:
            real(source, target, **kwargs)
            folder = kwargs.get("dst_dir_fd")
            where = _fd_path(folder) if folder is not None else os.path.dirname(str(target))
            name = os.path.basename(str(target))
            what = label(os.path.join(where, name))
            after("file renamed" if what == "temporary file fsynced" else what)

        return rename

    os.fsync = fsync  # type: ignore[assignment]
    os.rename = moved(real_rename)  # type: ignore[assignment]
    os.replace = moved(real_replace)  # type: ignore[assignment]


if __name__ == "__main__":
    trace_path, crash, separator, *arguments = sys.argv[1:]
    assert separator == "--"
    install(Path(trace_path), int(crash))
    from counterfoil.cli.main import main

    raise SystemExit(main(arguments))
