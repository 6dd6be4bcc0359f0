"""Reads made for the model instead of by it: the short files the task names, before its first
step, and a short file a change was refused for not having read, with that refusal.

A small model spent two of its ten steps reading files the task had named, and two more on the
read it was told to make and the change it then had to propose again. Each such read goes
through the gate like any read (a receipt-keeping workspace counts it as the model's), and a
file too long to show whole is never read for it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from .actions import ToolAction
from .context.agents_file import AGENTS_FILE
from .loop_parts import LoopPart, OpeningRead, TurnRecord
from .step_facts import OverviewFile, OverviewFolder, ReadFirst, TreeOverview
from .steps import StepResult

MAX_OPENING_READS = 3  # files the task names, read for the model before its first step
MAX_READ_FOR_THE_MODEL = 2000  # bytes of a file a refused change or an opening read shows


def named_files(task: str, tree: TreeOverview) -> tuple[str, ...]:
    """The listed files the task names, in the order it names them: by path, or by a file name
    that only one listed file has. AGENTS.md is left out (the prompt quotes it already)."""
    paths = [path for path in tree.file_paths() if path != AGENTS_FILE]
    names = Counter(PurePosixPath(path).name for path in paths)
    found: list[tuple[int, str]] = []
    for path in paths:
        name = PurePosixPath(path).name
        for candidate in (path, name) if names[name] == 1 else (path,):
            match = re.search(rf"(?<![\w./-]){re.escape(candidate)}(?![\w/-]|\.\w)", task)
            if match is not None:
                found.append((match.start(), path))
                break
    return tuple(path for _, path in sorted(found))


def opening_files(task: str, tree: TreeOverview) -> tuple[str, ...]:
    """The files read for the model before its first step: those the task names, then, when
    the whole project is that small (the listing complete, at most three files besides
    AGENTS.md), the rest of it (a small model searched for the task's words, found nothing
    and gave up, in a project of one file)."""
    named = named_files(task, tree)
    rest = tuple(path for path in tree.file_paths() if path != AGENTS_FILE and path not in named)
    folded = any(isinstance(entry, OverviewFolder) for entry in tree.entries)
    whole = tree.complete and not tree.more and not folded
    if whole and len(named) + len(rest) <= MAX_OPENING_READS:
        return named + rest
    return named[:MAX_OPENING_READS]


def short_file(tree: TreeOverview, path: str) -> bool:
    """A listed file short enough to show whole, judged before it is read: a read counts as
    the model's once done, so a file too long to show is never read for it."""
    return any(
        isinstance(entry, OverviewFile)
        and entry.path == path
        and entry.size <= MAX_READ_FOR_THE_MODEL
        for entry in tree.entries
    )


def read_for_the_model(
    taken: StepResult, tree: TreeOverview, take_step: Callable[[ToolAction], StepResult]
) -> StepResult:
    """A change refused because its file was not read: a short file is read now and shown
    with the refusal (`taken` itself when there is nothing to read)."""
    if not isinstance(taken.detail, ReadFirst) or taken.detail.text is not None:
        return taken
    if not short_file(tree, taken.detail.path):
        return taken
    read = take_step(ToolAction("read_file", {"path": taken.detail.path}))
    if read.is_error:
        return taken
    return replace(taken, detail=replace(taken.detail, text=read.observation))


class OpeningReads(LoopPart):
    """The opening files (see `opening_files`), each shown only when short."""

    def opening(self, run: TurnRecord) -> Sequence[OpeningRead]:
        tree = run.tree
        if tree is None:
            return ()
        reads = []
        for path in opening_files(run.task, tree):
            if not short_file(tree, path):
                continue
            action = ToolAction("read_file", {"path": path})
            read = run.take_step(action)
            if not read.is_error:
                reads.append(OpeningRead(path, action, read))
        return reads
