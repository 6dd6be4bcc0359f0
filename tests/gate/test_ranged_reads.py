"""read_file by line ranges: big files can be read and edited; the whole file stays the unit."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ToolAction, Workspace
from counterfoil.proposals import sha256_hex

LINES = 4210


def big_file(root: Path) -> Path:
    """About 110 KiB: over the 64 KiB read limit."""
    path = root / "big.py"
    path.write_text(
        "".join(f"value_{n:05} = {n}  # {'x' * 12}\n" for n in range(1, LINES + 1)),
        encoding="utf-8",
    )
    assert path.stat().st_size > 64 * 1024
    return path


def read(workspace: Workspace, path: str, **lines: object) -> str:
    return workspace.execute(ToolAction("read_file", {"path": path, **lines}))


def edit(workspace: Workspace, path: str, old: str, new: str) -> str:
    return workspace.execute(ToolAction("edit_file", {"path": path, "old": old, "new": new}))


def writer(root: Path) -> Workspace:
    return make_workspace(root, answer=True, allow_writes=True)


def test_a_range_says_which_lines_of_how_many(tmp_path: Path) -> None:
    big_file(tmp_path)
    observation = read(make_workspace(tmp_path), "big.py", start_line=1, end_line=3)
    assert observation.splitlines() == [
        "[lines 1–3 of 4,210]",
        "value_00001 = 1  # xxxxxxxxxxxx",
        "value_00002 = 2  # xxxxxxxxxxxx",
        "value_00003 = 3  # xxxxxxxxxxxx",
    ]


def test_a_plain_read_of_a_big_file_is_still_refused(tmp_path: Path) -> None:
    big_file(tmp_path)
    assert read(make_workspace(tmp_path), "big.py") == "error: file exceeds 65536 bytes"


def test_an_open_ended_range_reads_to_the_end(tmp_path: Path) -> None:
    big_file(tmp_path)
    observation = read(make_workspace(tmp_path), "big.py", start_line=4209)
    assert observation.splitlines()[0] == "[lines 4,209–4,210 of 4,210]"
    assert observation.endswith("value_04210 = 4210  # xxxxxxxxxxxx\n")


def test_a_range_over_the_read_limit_is_cut_at_whole_lines(tmp_path: Path) -> None:
    big_file(tmp_path)
    observation = read(
        make_workspace(tmp_path, max_file_bytes=100), "big.py", start_line=10, end_line=20
    )
    assert observation.splitlines()[0] == (
        "[lines 10–12 of 4,210; cut at 100 bytes, continue from line 13]"
    )
    assert len(observation.splitlines()) == 4


@pytest.mark.parametrize(
    "lines, message",
    [
        ({"start_line": 0}, "read_file argument start_line must be a positive integer"),
        ({"end_line": "3"}, "read_file argument end_line must be a positive integer"),
        ({"start_line": True}, "read_file argument start_line must be a positive integer"),
        ({"start_line": 5, "end_line": 4}, "end_line must not be before start_line"),
        ({"start_line": 5000}, "start_line is past the end of the file (4,210 lines)"),
    ],
)
def test_bad_ranges_are_refused(tmp_path: Path, lines: dict[str, object], message: str) -> None:
    big_file(tmp_path)
    assert read(make_workspace(tmp_path), "big.py", **lines) == f"error: {message}"


def test_a_ranged_read_records_the_digest_of_the_whole_file(tmp_path: Path) -> None:
    path = big_file(tmp_path)
    workspace = writer(tmp_path)
    read(workspace, "big.py", start_line=100, end_line=101)
    assert workspace.read_digests["big.py"] == sha256_hex(path.read_bytes())


def test_a_file_over_64_kib_can_be_edited_after_a_ranged_read(tmp_path: Path) -> None:
    path = big_file(tmp_path)
    workspace = writer(tmp_path)
    assert edit(workspace, "big.py", "value_02000 = 2000", "value_02000 = 0") == (
        "error: read the existing file before changing it"
    )
    read(workspace, "big.py", start_line=1999, end_line=2001)
    assert edit(workspace, "big.py", "value_02000 = 2000", "value_02000 = 0") == "edited big.py"
    text = path.read_text(encoding="utf-8")
    assert "value_02000 = 0  #" in text
    assert len(text.splitlines()) == LINES


def test_old_text_must_occur_once_in_the_whole_file_not_the_range(tmp_path: Path) -> None:
    big_file(tmp_path)
    workspace = writer(tmp_path)
    observation = read(workspace, "big.py", start_line=1, end_line=1)
    assert observation.count("xxxxxxxxxxxx") == 1
    assert edit(workspace, "big.py", "xxxxxxxxxxxx", "y") == (
        "error: old text must occur exactly once"
    )


def test_an_edit_of_a_big_file_may_grow_it_by_at_most_the_write_limit(tmp_path: Path) -> None:
    path = big_file(tmp_path)
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True, max_write_bytes=1000)
    read(workspace, "big.py", start_line=1, end_line=1)
    size = path.stat().st_size
    grown = edit(workspace, "big.py", "value_00001 = 1 ", "value_00001 = 1 #" + "z" * 1000)
    assert grown == f"error: write exceeds {size + 1000} bytes"
    assert edit(workspace, "big.py", "value_00001 = 1 ", "value_00001 = 1 #" + "z" * 899) == (
        "edited big.py"
    )


def test_an_edit_is_refused_when_the_big_file_changed_since_the_ranged_read(
    tmp_path: Path,
) -> None:
    path = big_file(tmp_path)
    workspace = writer(tmp_path)
    read(workspace, "big.py", start_line=1, end_line=1)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("tail = 1\n")
    assert edit(workspace, "big.py", "value_00001 = 1 ", "value_00001 = 2 ") == (
        "error: file changed since it was read"
    )
