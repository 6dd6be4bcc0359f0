"""Files whose stat the command tree's cache may trust: the racy window (git's "racily clean"
rule) re-reads anything that changed close to a snapshot's start, so a test that expects an
entry to be reused waits until it is out of that window first."""

from __future__ import annotations

import os
import time
from pathlib import Path

from counterfoil.commands.tree.snapshot import RACY_NANOSECONDS


def written_long_ago(path: Path, text: str) -> None:
    """A file whose mtime is well out of the stat cache's racy window (its ctime is not: see
    `settled`)."""
    path.write_text(text)
    os.utime(path, ns=(10**18, 10**18))


def settled() -> None:
    """Waits until what was just written (its ctime, which cannot be set back) is out of the
    stat cache's racy window."""
    time.sleep(RACY_NANOSECONDS / 1e9 + 0.02)
