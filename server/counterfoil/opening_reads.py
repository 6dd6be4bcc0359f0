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


# The words a task uses for a file by its kind alone, and the suffixes of files of that kind.
KIND_WORDS = (
    (re.compile(r"\bJSON\b"), (".json",)),
    (re.compile(r"\bTOML\b"), (".toml",)),
    (re.compile(r"\bYAML\b"), (".yaml", ".yml")),
    (re.compile(r"\bCSV\b"), (".csv",)),
    (re.compile(r"\bINI\b"), (".ini", ".cfg")),
    (re.compile(r"\b(?:[Dd]ocs|[Dd]ocumentation|README)\b"), (".md", ".rst", ".txt")),
)


def referred_files(task: str, tree: TreeOverview) -> tuple[str, ...]:
    """The listed files the task refers to by their kind alone ("the project's JSON
    defaults"): for each kind it names, the one listed file of that kind, when the listing is
    complete and the task names no file of it by name. The 1.5B, told to set a constant to
    "the retry count the project's JSON defaults set", never read defaults.json and answered
    with the constant unchanged."""
    if not tree.complete or tree.more:
        return ()
    named = set(named_files(task, tree))
    paths = [path for path in tree.file_paths() if path != AGENTS_FILE]
    found: list[str] = []
    for word, suffixes in KIND_WORDS:
        kind = [path for path in paths if path.lower().endswith(suffixes)]
        if word.search(task) and len(kind) == 1 and kind[0] not in named:
            found.append(kind[0])
    return tuple(dict.fromkeys(found))


def unread_sources(run: TurnRecord) -> tuple[str, ...]:
    """The files the task refers to by their kind alone (`referred_files`) that the model has
    not read: until it has, the grammar offers no change. A file whose read failed is left
    out (nothing the model can do would make the change possible again)."""
    gate = run.gate
    if run.tree is None or gate is None:
        return ()
    failed = {
        str(action.arguments.get("path"))
        for action, step in run.history
        if action.tool == "read_file" and step.is_error
    }
    seen = gate.read_digests
    return tuple(
        path
        for path in referred_files(run.task, run.tree)
        if path not in seen and path not in failed
    )


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
