"""The walk's listing loops in C give what its Python loops give, name for name and key for
key; the C ones are built wherever the suite's install had a compiler."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from counterfoil.commands.tree import listing
from counterfoil.files.files import DIRECTORY_FLAGS


@pytest.fixture
def compiled() -> object:
    if listing.compiled is None:
        pytest.skip("the C listing was not built: this install had no C compiler")
    return listing.compiled


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[int]:
    """A folder of every kind of name, opened: files, a subfolder, a symlink (never followed),
    a dangling one, a FIFO, and a name that is not UTF-8."""
    (tmp_path / "a.py").write_text("A = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to("a.py")
    (tmp_path / "dangling").symlink_to("nowhere")
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name\n")
    fd = os.open(tmp_path, DIRECTORY_FLAGS)
    yield fd
    os.close(fd)


def test_the_c_listing_is_built_where_the_install_had_a_compiler() -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine")
    assert listing.COMPILED, "setup.py's optional extension was not built"


def test_a_folder_read_in_c_is_the_folder_read_in_python(compiled: object, folder: int) -> None:
    in_c = listing.folder_listing(folder)

    assert in_c == listing.python_folder_listing(folder)
    assert os.fsdecode(b"caf\xe9.txt") in {key[0] for key in in_c}


def test_known_names_stat_again_in_c_are_those_stat_in_python(
    compiled: object, folder: int
) -> None:
    previous = listing.python_folder_listing(folder)

    assert listing.listing_by_names(folder, previous) == listing.python_listing_by_names(
        folder, previous
    )


def test_an_unchanged_folder_gives_back_its_last_listing_itself(
    compiled: object, folder: int
) -> None:
    previous = listing.folder_listing(folder)

    assert listing.listing_by_names(folder, previous) is previous


def test_a_key_that_changed_gives_a_new_listing_with_the_new_key(
    compiled: object, folder: int, tmp_path: Path
) -> None:
    previous = listing.folder_listing(folder)
    (tmp_path / "a.py").write_text("A = 22\n")

    again = listing.listing_by_names(folder, previous)

    assert again is not previous
    assert {key[0]: key[1] for key in again}["a.py"] == len("A = 22\n")


def test_a_new_listing_keeps_the_last_listings_own_entries_where_nothing_changed(
    compiled: object, folder: int, tmp_path: Path
) -> None:
    previous = listing.folder_listing(folder)
    (tmp_path / "a.py").write_text("A = 22\n")

    again = listing.listing_by_names(folder, previous)

    assert [was is key for was, key in zip(previous, again)] == [
        key[0] != "a.py" for key in previous
    ]
    assert listing.listing_changes(previous, again) == (
        [key for key in again if key[0] == "a.py"],
        {"a.py"},
    )


def test_a_known_name_gone_reads_the_folder_afresh(
    compiled: object, folder: int, tmp_path: Path
) -> None:
    previous = listing.folder_listing(folder)
    (tmp_path / "a.py").unlink()

    again = listing.listing_by_names(folder, previous)

    assert "a.py" not in {key[0] for key in again}
    assert len(again) == len(previous) - 1


def test_a_batch_on_threads_lists_each_folder_in_order(compiled: object, tmp_path: Path) -> None:
    fds = []
    for index in range(40):
        (tmp_path / f"d{index}").mkdir()
        for name in range(index % 7):
            (tmp_path / f"d{index}" / f"f{name}").write_text(str(index))
        fds.append(os.open(tmp_path / f"d{index}", DIRECTORY_FLAGS))
    try:
        batch = listing.compiled.listings([(fd, None) for fd in fds], 4)  # type: ignore[union-attr]

        assert batch == [listing.python_folder_listing(fd) for fd in fds]
    finally:
        for fd in fds:
            os.close(fd)


def test_a_job_of_the_wrong_shape_is_a_type_error_not_a_crash(compiled: object) -> None:
    with pytest.raises(TypeError, match="stat key"):
        listing.compiled.listings([(0, [("a.py", 1)])], 1)  # type: ignore[union-attr]
    with pytest.raises(TypeError, match="each job"):
        listing.compiled.listings([0], 1)  # type: ignore[union-attr]


WALK_UNDER_A_LOW_DESCRIPTOR_LIMIT = """
import resource, sys
from pathlib import Path
from counterfoil.commands.tree.walk import take_snapshot
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
snapshot = take_snapshot(Path(sys.argv[1]))
print(sum(1 for path in snapshot.entries if path.endswith("f.txt")), snapshot.incomplete)
"""


def test_a_deep_tree_of_wide_folders_is_walked_whole_under_a_low_descriptor_limit(
    compiled: object, tmp_path: Path
) -> None:
    """Each level's subfolders are listed ahead of the walk while it descends into the
    first: the descriptors held at once stay within the process's limit, so no folder is
    taken for unreadable."""
    folder = tmp_path / "tree"
    for _ in range(6):
        for index in range(30):
            (folder / f"d{index:02}").mkdir(parents=True)
            (folder / f"d{index:02}" / "f.txt").write_text("x")
        folder = folder / "d00"

    completed = subprocess.run(
        [sys.executable, "-c", WALK_UNDER_A_LOW_DESCRIPTOR_LIMIT, str(tmp_path / "tree")],
        capture_output=True,
        text=True,
        check=True,
    )

    assert completed.stdout.split() == ["180", "None"]
