"""Snapshots: a stat cache that hashes only what changed, and the project's ignore rules."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from tests.support.tree_files import settled, written_long_ago

from counterfoil.commands.tree.changes import compare
from counterfoil.commands.tree.ignore import is_ignored, parse_gitignore
from counterfoil.commands.tree.snapshot import Entry, TreeLimits
from counterfoil.commands.tree.walk import take_snapshot

pytestmark = pytest.mark.usefixtures("listing_loops")


def ignored(lines: str, path: str, folder: bool = False, base: str = "") -> bool:
    return is_ignored(parse_gitignore(lines, base), path, folder)


def test_a_name_pattern_matches_at_any_depth() -> None:
    assert ignored("*.log\n", "a/b/run.log")


def test_a_pattern_with_a_slash_is_anchored_to_its_folder() -> None:
    assert ignored("/build\n", "build", folder=True)
    assert not ignored("/build\n", "src/build", folder=True)


def test_a_trailing_slash_matches_folders_only() -> None:
    assert not ignored("out/\n", "out")


def test_a_later_negation_re_includes() -> None:
    assert not ignored("*.txt\n!keep.txt\n", "keep.txt")


def test_double_star_spans_folders() -> None:
    assert ignored("docs/**/gen.md\n", "docs/a/b/gen.md")


def test_a_nested_gitignore_applies_below_its_folder_only() -> None:
    assert ignored("*.tmp\n", "sub/x.tmp", base="sub")
    assert not ignored("*.tmp\n", "x.tmp", base="sub")


def test_the_comparison_hashes_only_entries_whose_stat_changed(tmp_path: Path) -> None:
    for index in range(50):
        written_long_ago(tmp_path / f"f{index}.txt", str(index))
    settled()
    before = take_snapshot(tmp_path)
    os.utime(tmp_path / "f0.txt", ns=(0, 0))
    (tmp_path / "f1.txt").write_text("new")
    after = take_snapshot(tmp_path, previous=before, hash_files=False)
    hashed: list[str] = []

    def hash_entry(path: str, entry: Entry) -> Entry:
        hashed.append(path)
        return take_snapshot(tmp_path).entries[path]

    changes = compare(before, after, hash_entry, TreeLimits())

    assert sorted(hashed) == ["f0.txt", "f1.txt"]
    assert changes.paths == ("f1.txt",)


def test_a_snapshot_over_its_entry_cap_says_it_is_incomplete(tmp_path: Path) -> None:
    for index in range(10):
        (tmp_path / f"f{index}").touch()

    snapshot = take_snapshot(tmp_path, limits=TreeLimits(max_entries=4))

    assert len(snapshot.entries) == 4
    assert snapshot.incomplete == "more than 4 entries"


def test_a_snapshot_that_stops_early_leaves_no_folder_open(tmp_path: Path) -> None:
    for folder in range(40):
        (tmp_path / f"d{folder:02}").mkdir()
        for index in range(5):
            (tmp_path / f"d{folder:02}" / f"f{index}").touch()
    gc.collect()  # what earlier tests left for the collector is closed now, not mid-count
    open_before = len(os.listdir("/proc/self/fd"))

    snapshot = take_snapshot(tmp_path, limits=TreeLimits(max_entries=12, walk_threads=4))

    assert snapshot.incomplete == "more than 12 entries"
    assert len(os.listdir("/proc/self/fd")) == open_before


def test_the_walk_lists_folders_ahead_on_threads_to_the_same_snapshot(tmp_path: Path) -> None:
    for folder in range(30):
        (tmp_path / f"d{folder:02}" / "sub").mkdir(parents=True)
        (tmp_path / f"d{folder:02}" / "sub" / "f.txt").write_text(str(folder))
        (tmp_path / f"d{folder:02}" / "g.txt").write_text(str(folder))

    threaded = take_snapshot(tmp_path, limits=TreeLimits(walk_threads=4))
    alone = take_snapshot(tmp_path, limits=TreeLimits(walk_threads=0))

    assert list(threaded.entries.items()) == list(alone.entries.items())


def test_a_snapshot_over_its_time_limit_says_it_is_incomplete(tmp_path: Path) -> None:
    (tmp_path / "f").touch()

    snapshot = take_snapshot(tmp_path, limits=TreeLimits(max_seconds=0))

    assert snapshot.incomplete == "took more than 0 s"


def test_protected_files_are_recorded_by_stat_and_protected_folders_not_entered(
    tmp_path: Path,
) -> None:
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text("{}")
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("")

    snapshot = take_snapshot(tmp_path)

    entry = snapshot.entries[".vscode/settings.json"]
    assert (entry.digest, entry.note) == (None, "protected")
    assert ".ssh/config" not in snapshot.entries
    assert snapshot.ignored == {"protected": 1}


def test_a_rewrite_too_close_to_the_snapshot_to_trust_its_stat_is_still_a_change(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.txt").write_text("aaaa")
    before = take_snapshot(tmp_path)
    kept = os.lstat(tmp_path / "f.txt")
    (tmp_path / "f.txt").write_text("bbbb")  # same size; mtime set back to the same tick
    os.utime(tmp_path / "f.txt", ns=(kept.st_atime_ns, kept.st_mtime_ns))
    after = take_snapshot(tmp_path, previous=before, hash_files=False)

    changes = compare(
        before, after, lambda path, entry: take_snapshot(tmp_path).entries[path], TreeLimits()
    )

    assert changes.paths == ("f.txt",)


def test_an_unchanged_folder_is_taken_whole_from_the_last_walk(tmp_path: Path) -> None:
    for index in range(3):
        written_long_ago(tmp_path / f"f{index}.txt", str(index))
    (tmp_path / "sub").mkdir()
    written_long_ago(tmp_path / "sub" / "g.txt", "g")
    settled()
    first = take_snapshot(tmp_path)

    second = take_snapshot(tmp_path, previous=first)

    assert second.folders[""] is first.folders[""]
    assert second.folders["sub/"] is first.folders["sub/"]
    assert second.entries == first.entries and second.fresh == []


def test_a_file_rewritten_in_an_unchanged_folder_listing_is_seen(tmp_path: Path) -> None:
    written_long_ago(tmp_path / "a.txt", "a")
    written_long_ago(tmp_path / "b.txt", "b")
    settled()
    first = take_snapshot(tmp_path)
    (tmp_path / "b.txt").write_text("B")  # same size, new mtime: the listing differs

    second = take_snapshot(tmp_path, previous=first, hash_files=False)
    changes = compare(
        first, second, lambda path, entry: take_snapshot(tmp_path).entries[path], TreeLimits()
    )

    assert second.fresh == ["b.txt"]
    assert changes.paths == ("b.txt",)


def test_a_changed_gitignore_is_read_again(tmp_path: Path) -> None:
    written_long_ago(tmp_path / ".gitignore", "*.log\n")
    written_long_ago(tmp_path / "run.log", "x")
    settled()
    first = take_snapshot(tmp_path)
    (tmp_path / ".gitignore").write_text("*.tmp\n")

    second = take_snapshot(tmp_path, previous=first)

    assert "run.log" not in first.entries
    assert "run.log" in second.entries


def test_a_folder_whose_listing_changed_keeps_what_it_knew_of_the_other_names(
    tmp_path: Path,
) -> None:
    for name in ("a.txt", "b.txt", "old.txt"):
        written_long_ago(tmp_path / name, name)
    (tmp_path / "__pycache__").mkdir()
    settled()
    first = take_snapshot(tmp_path)
    (tmp_path / "old.txt").unlink()
    (tmp_path / "new.txt").write_text("new")

    second = take_snapshot(tmp_path, previous=first, hash_files=False)
    changes = compare(
        first, second, lambda path, entry: take_snapshot(tmp_path).entries[path], TreeLimits()
    )

    assert second.entries["a.txt"] is first.entries["a.txt"]
    assert second.fresh == ["new.txt"]
    assert [(change.path, change.change) for change in changes.changes] == [
        ("new.txt", "created"),
        ("old.txt", "deleted"),
    ]
    assert second.ignored == {"cache": 1}


def test_a_git_folder_is_walked_for_its_config_hooks_and_info_alone(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    for folder in ("hooks", "info", "objects/ab", "refs/heads"):
        (git / folder).mkdir(parents=True)
    for name in ("config", "hooks/pre-commit", "info/exclude", "objects/ab/cd", "HEAD", "index"):
        (git / name).write_text("x")

    snapshot = take_snapshot(tmp_path)

    assert sorted(snapshot.entries) == [".git/config", ".git/hooks/pre-commit", ".git/info/exclude"]
    assert {entry.note for entry in snapshot.entries.values()} == {"protected"}
