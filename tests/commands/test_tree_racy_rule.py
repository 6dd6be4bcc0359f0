"""Git's "racily clean" rule at the file system's granularity, with a fake clock for the
snapshots' start: a whole-second timestamp may be a coarse clock's, so what it stamps is read
again by the next walk until the snapshot that read it started two seconds after it."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from counterfoil.commands.tree import walk
from counterfoil.commands.tree.snapshot import SECOND_NANOSECONDS, Snapshot
from counterfoil.commands.tree.walk import take_snapshot

pytestmark = pytest.mark.usefixtures("listing_loops")


def whole_second() -> int:
    """A whole second a minute after now: a stamp a coarse file system could have given, later
    than the real ctime of what the test just wrote (read when the test runs, not when the
    suite was collected, which may be minutes earlier)."""
    return (time.time_ns() // SECOND_NANOSECONDS + 60) * SECOND_NANOSECONDS


def taken_at(
    root: Path, start_ns: int, monkeypatch: pytest.MonkeyPatch, **options: Any
) -> Snapshot:
    """A snapshot of `root` whose start the walk's clock reads as `start_ns`."""
    fake = SimpleNamespace(time_ns=lambda: start_ns, monotonic=time.monotonic)
    with monkeypatch.context() as patched:
        patched.setattr(walk, "time", fake)
        return take_snapshot(root, **options)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files the walk reads (hashes) while the test runs."""
    names: list[str] = []
    real = walk.digest_file

    def counted(directory: int, name: str, *rest: Any) -> Any:
        names.append(name)
        return real(directory, name, *rest)

    monkeypatch.setattr(walk, "digest_file", counted)
    return names


def stamped(path: Path, stamp_ns: int) -> None:
    os.utime(path, ns=(stamp_ns, stamp_ns))


@pytest.mark.parametrize(("after_ns", "read_again"), [(500_000_000, True), (2_500_000_000, False)])
def test_a_file_stamped_in_a_whole_second_is_read_again_until_two_seconds_after_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reads: list[str],
    after_ns: int,
    read_again: bool,
) -> None:
    (tmp_path / "app.py").write_text("A = 1\n")
    stamp = whole_second()
    stamped(tmp_path / "app.py", stamp)
    first = taken_at(tmp_path, stamp + after_ns, monkeypatch)
    reads.clear()

    taken_at(tmp_path, stamp + 10 * SECOND_NANOSECONDS, monkeypatch, previous=first)

    assert reads == (["app.py"] if read_again else [])


@pytest.mark.parametrize(
    ("after_ns", "listed_again"), [(500_000_000, True), (2_500_000_000, False)]
)
def test_a_folder_stamped_in_a_whole_second_is_listed_again_until_two_seconds_after_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    listings: list[Any],
    after_ns: int,
    listed_again: bool,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("A = 1\n")
    stamp = whole_second()
    stamped(tmp_path / "src", stamp)
    first = taken_at(tmp_path, stamp + after_ns, monkeypatch)
    listings.clear()

    taken_at(tmp_path, stamp + 10 * SECOND_NANOSECONDS, monkeypatch, previous=first)

    assert len(listings) == (1 if listed_again else 0)
