"""A folder whose own stat is unchanged since it was listed is not listed again: its names are
taken from the last listing and each stat again, so no write to a file is missed, and a name
made in it (which moves the folder's ctime even when its mtime is put back) is still seen."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.support.tree_files import settled

from counterfoil.commands.tree import listing
from counterfoil.commands.tree.snapshot import Snapshot
from counterfoil.commands.tree.walk import take_snapshot


def listed_twice(root: Path) -> Snapshot:
    """A tree of one folder, snapshot twice with a settled pause before each: the second walk
    keeps the folder's own stat, as settled when it listed it."""
    (root / "src").mkdir()
    for index in range(5):
        (root / "src" / f"m{index}.py").write_text(f"V = {index}\n")
    settled()
    first = take_snapshot(root)
    settled()
    return take_snapshot(root, previous=first)


pytestmark = pytest.mark.usefixtures("listing_loops")


def test_a_settled_unchanged_folder_is_not_listed_again(
    tmp_path: Path, listings: list[Any]
) -> None:
    second = listed_twice(tmp_path)
    listings.clear()

    third = take_snapshot(tmp_path, previous=second)

    assert listings == []
    assert third.entries == second.entries


def test_a_file_rewritten_in_place_in_an_unlisted_folder_is_seen(
    tmp_path: Path, listings: list[Any]
) -> None:
    second = listed_twice(tmp_path)
    path = tmp_path / "src" / "m3.py"
    kept = os.stat(path)
    with open(path, "r+b") as handle:
        handle.write(b"X")  # same size, in place
    os.utime(path, ns=(kept.st_atime_ns, kept.st_mtime_ns))
    listings.clear()

    third = take_snapshot(tmp_path, previous=second)

    assert listings == []
    assert third.fresh == ["src/m3.py"]
    assert third.entries["src/m3.py"].digest != second.entries["src/m3.py"].digest


def test_a_name_made_in_a_folder_whose_mtime_was_put_back_is_seen(tmp_path: Path) -> None:
    second = listed_twice(tmp_path)
    folder = os.stat(tmp_path / "src")
    (tmp_path / "src" / "new.py").write_text("NEW = 1\n")
    os.utime(tmp_path / "src", ns=(folder.st_atime_ns, folder.st_mtime_ns))

    third = take_snapshot(tmp_path, previous=second)

    assert "src/new.py" in third.entries and "src/new.py" not in second.entries


def test_a_name_removed_from_a_settled_folder_is_seen_gone(tmp_path: Path) -> None:
    second = listed_twice(tmp_path)
    (tmp_path / "src" / "m1.py").unlink()

    third = take_snapshot(tmp_path, previous=second)

    assert "src/m1.py" not in third.entries and "src/m0.py" in third.entries


def test_the_changes_between_two_listings_of_other_names_are_found_by_key() -> None:
    earlier = [("a", 1, 1, 1, 1, 1), ("b", 2, 2, 2, 2, 2)]
    later = [("c", 3, 3, 3, 3, 3), ("a", 1, 1, 1, 1, 1)]

    assert listing.listing_changes(earlier, later) == ([("c", 3, 3, 3, 3, 3)], {"b"})
