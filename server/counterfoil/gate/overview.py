"""What the root holds, as the model may see it: every file the path rules allow, with its
size, folded into folder totals past a budget, so the first prompt can show a model what
exists instead of leaving it to guess names; and the paths closest to one that does not exist.

The walk reads names and sizes only (no file's text), through descriptors that follow no link,
and leaves out what `list_files` leaves out, by the same rule (`WorkspacePaths.hidden_entries`:
protected names, the receipt log and its store, Counterfoil's own folders), and symlinks and
special files. Caches (`__pycache__`, `node_modules`, …) are shown, not walked.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..commands.tree.ignore import CACHE_NAMES
from ..files.files import directory_entries, open_directory
from ..step_facts import OverviewEntry, OverviewFile, OverviewFolder, TreeOverview
from .workspace_paths import WorkspacePaths

MAX_OVERVIEW_LINES = 40  # files and folded folders shown in the prompt
MAX_WALKED_ENTRIES = 5_000  # entries looked at before the walk stops counting
MAX_NEARBY = 3


@dataclass(frozen=True)
class _Walked:
    files: tuple[OverviewFile, ...]
    folders: tuple[str, ...]  # walked folders, shallow first
    unwalked: tuple[str, ...]  # folders shown but not walked (caches)
    complete: bool


def tree_overview(paths: WorkspacePaths, max_lines: int = MAX_OVERVIEW_LINES) -> TreeOverview:
    """The root's files under the path rules, folded deepest folder first until they fit."""
    walked = _walk(paths)
    entries: list[OverviewEntry] = [*walked.files]
    entries += [OverviewFolder(folder, None, None) for folder in walked.unwalked]
    for folder in sorted(walked.folders, key=lambda item: (-item.count("/"), item)):
        if len(entries) <= max_lines:
            break
        inside = [entry for entry in entries if entry.path.startswith(folder + "/")]
        if not inside:
            continue
        files = [item for item in walked.files if item.path.startswith(folder + "/")]
        folded = OverviewFolder(folder, len(files), sum(item.size for item in files))
        if any(isinstance(entry, OverviewFolder) and entry.files is None for entry in inside):
            folded = OverviewFolder(folder, None, None)
        entries = [entry for entry in entries if entry not in inside] + [folded]
    entries.sort(key=lambda entry: (entry.path.count("/"), entry.path))
    more = max(0, len(entries) - max_lines)
    return TreeOverview(tuple(entries[:max_lines]), more, walked.complete)


def lists_every_file(tree: TreeOverview) -> bool:
    """Whether the overview names every file there is (no folder folded but a cache)."""
    if not tree.complete or tree.more:
        return False
    return all(
        isinstance(entry, OverviewFile) or PurePosixPath(entry.path).name in CACHE_NAMES
        for entry in tree.entries
    )


def nearby_paths(paths: WorkspacePaths, missing: str, count: int = MAX_NEARBY) -> tuple[str, ...]:
    """The existing paths closest to `missing` by name, closest first (files and folders)."""
    walked = _walk(paths)
    candidates = [item.path for item in walked.files] + [*walked.folders, *walked.unwalked]
    name = missing.rsplit("/", 1)[-1]

    def closeness(candidate: str) -> float:
        whole = difflib.SequenceMatcher(None, missing, candidate).ratio()
        last = difflib.SequenceMatcher(None, name, candidate.rsplit("/", 1)[-1]).ratio()
        return max(whole, last)

    ranked = sorted(candidates, key=lambda candidate: (-closeness(candidate), candidate))
    return tuple(ranked[:count])


def _walk(paths: WorkspacePaths) -> _Walked:
    hidden = paths.hidden_entries()
    files: list[OverviewFile] = []
    folders: list[str] = []
    unwalked: list[str] = []
    queue: list[tuple[str, ...]] = [()]
    seen = 0
    while queue:
        parts = queue.pop(0)
        for name, info in _entries(paths, parts):
            seen += 1
            if seen > MAX_WALKED_ENTRIES:
                return _Walked(tuple(files), tuple(folders), tuple(unwalked), False)
            child = (*parts, name)
            if hidden(child, info):
                continue
            relative = "/".join(child)
            if stat.S_ISDIR(info.st_mode):
                if name in CACHE_NAMES:
                    unwalked.append(relative)
                else:
                    folders.append(relative)
                    queue.append(child)
            elif stat.S_ISREG(info.st_mode):
                files.append(OverviewFile(relative, info.st_size))
    return _Walked(tuple(files), tuple(folders), tuple(unwalked), True)


def _entries(paths: WorkspacePaths, parts: tuple[str, ...]) -> Iterator[tuple[str, os.stat_result]]:
    try:
        with open_directory(paths.policy.root, parts) as directory:
            yield from list(directory_entries(directory))
    except (OSError, ValueError):  # a folder that went away or turned into a link mid-walk
        return


def walked_paths(paths: WorkspacePaths) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """Every file and every folder the walk sees (what `list_files` would show of each
    folder), and whether it saw all of them."""
    walked = _walk(paths)
    files = tuple(item.path for item in walked.files)
    return files, (*walked.folders, *walked.unwalked), walked.complete
