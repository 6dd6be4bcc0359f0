"""The log a store opened, by identity: the folder and file it found (device and inode), pinned
at open, so a log folder moved away and replaced, or a log swapped for another file, is noticed
before anything is appended to the stranger, whatever ran in between (a command run as the
user, another program) and even when the stranger is a valid log of its own."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import ReceiptLogError

Identity = tuple[int, int]  # (st_dev, st_ino)


def _identity(fd: int) -> Identity:
    info = os.fstat(fd)
    return (info.st_dev, info.st_ino)


@dataclass
class PinnedLog:
    """The identities first seen of the log's folder and of the log (None until seen)."""

    path: Path
    folder: Identity | None = None
    log: Identity | None = None

    def check_folder(self, fd: int | None) -> None:
        """Raise unless the folder open now is the one pinned (pinning it when first seen)."""
        if fd is None:
            if self.folder is not None:
                raise self._replaced(f"the receipt log's folder {self.path.parent}")
            return
        found = _identity(fd)
        if self.folder is None:
            self.folder = found
        elif found != self.folder:
            raise self._replaced(f"the receipt log's folder {self.path.parent}")

    def check_log(self, fd: int | None) -> None:
        """Raise unless the log open now is the one pinned (pinning it when first seen)."""
        if fd is None:
            if self.log is not None:
                raise self._replaced(f"the receipt log {self.path}")
            return
        found = _identity(fd)
        if self.log is None:
            self.log = found
        elif found != self.log:
            raise self._replaced(f"the receipt log {self.path}")

    @staticmethod
    def _replaced(what: str) -> ReceiptLogError:
        return ReceiptLogError(
            f"{what} is not the one this process opened (it was moved, removed or replaced); "
            "refusing to append"
        )
