"""The workspace as the model has seen it this turn (`WorkspaceView`), from the gate's record.

The names are those the overview and the model's listings showed (and every file a search
looked in, since its hits name files by path), each listing taken from the walk the overview
makes (the same rules as `list_files`, and the folder as it is now, so a
file written since is there); a file counts as read when the record has it as seen and its
bytes are still those (what the gate checks a change against), with the lines the model's
reads showed of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from ..actions import ToolAction
from ..errors import AgentError
from ..gate.overview import lists_every_file, walked_paths
from ..gate.workspace import Workspace
from ..proposals import sha256_hex
from ..step_facts import OverviewFolder, TreeOverview
from ..steps import StepResult
from ..workspace_view import FileRead, WorkspaceView, literal_pattern
from .evidence import ARTIFACT_FOLDER


def workspace_view(
    workspace: Workspace,
    tree: TreeOverview | None,
    steps: Iterable[tuple[ToolAction, StepResult]],
    artifacts: Iterable[str] = (),
    shown_whole: Iterable[str] = (),
    *,
    read_first: tuple[str, ...] = (),
    final_offered: bool = True,
) -> WorkspaceView:
    """What `workspace` has shown the model after `steps` (its reads and listings, in order)
    with `tree` the overview it was shown last, and the results externalized so far
    (`artifacts`, their ids: a range of one may be read), and the files whose whole text the
    conversation still shows (`shown_whole`: kept when their bytes are unchanged since they
    were read). A change is offered only where the policy's editable paths allow one, and
    none while a file in `read_first` (one the task refers to) is unread; `final_offered`
    False: the turn after a held final answer is an action."""
    steps = list(steps)
    sent_unchanged = _sent_unchanged(workspace, steps)
    steps = [(action, step) for action, step in steps if not step.is_error]
    files_now, folders_now, _ = walked_paths(workspace.paths)
    files: dict[str, None] = {}
    folders: dict[str, None] = {}
    if tree is not None:
        for entry in tree.entries:
            (folders if isinstance(entry, OverviewFolder) else files)[entry.path] = None
    for path in list(files):
        for parent in PurePosixPath(path).parents:
            if str(parent) != ".":
                folders[str(parent)] = None
    listed = {_relative(workspace, action) for action, _ in steps if action.tool == "list_files"}
    searched = {
        _relative(workspace, action) for action, _ in steps if action.tool == "search_files"
    }
    for path in files_now:
        if _parent(path) in listed or _under(path, searched):
            files[path] = None
    for path in folders_now:
        if _parent(path) in listed:
            folders[path] = None
    unchanged = _unchanged(workspace)
    return WorkspaceView(
        files=tuple(files),
        folders=tuple(folders),
        reads=_reads(workspace, steps, unchanged, sent_unchanged),
        existing=(*files_now, *folders_now),
        new_files_under=workspace.policy.editable_paths,
        existing_files=tuple(files_now),
        read_pattern=_ranges(artifacts),
        shown_whole=tuple(path for path in dict.fromkeys(shown_whole) if path in unchanged),
        read_first=read_first,
        listed_whole=tree is not None and lists_every_file(tree),
        final_offered=final_offered,
    )


def _reads(
    workspace: Workspace,
    steps: list[tuple[ToolAction, StepResult]],
    unchanged: dict[str, bytes],
    sent_unchanged: dict[str, tuple[str, ...]],
) -> tuple[FileRead, ...]:
    """The files seen whose bytes are unchanged since, with the lines shown of each: a whole
    read or a write shows all of it; ranged reads show the span from the first line to the
    last they showed; a file seen before these steps (an earlier run's read) all of it; and
    the old texts the model sent back unchanged."""
    shown: dict[str, tuple[int, int] | None] = {}
    for action, step in steps:
        path = str(action.arguments.get("path", ""))
        if action.tool == "read_file":
            if step.lines is None:
                shown[path] = None
            elif path not in shown or shown[path] is not None:  # all of it stays all of it
                start, stop = step.lines.start, step.lines.stop
                earlier = shown.get(path)
                if earlier is not None:
                    start, stop = min(start, earlier[0]), max(stop, earlier[1])
                shown[path] = (start, stop)
        elif action.tool == "write_file" and step.effect and step.effect.state == "approved":
            shown[path] = None
    reads = []
    for path, data in unchanged.items():
        if not workspace.policy.editable(path):
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        reads.append(FileRead(path, text, shown.get(path), sent_unchanged.get(path, ())))
    return tuple(reads)


def _sent_unchanged(
    workspace: Workspace, steps: list[tuple[ToolAction, StepResult]]
) -> dict[str, tuple[str, ...]]:
    """Per file, the old texts of the edits that named the same text as their new (each one
    refused: it changes nothing)."""
    sent: dict[str, dict[str, None]] = {}
    for action, _ in steps:
        old, new = action.arguments.get("old"), action.arguments.get("new")
        if action.tool == "edit_file" and isinstance(old, str) and old == new:
            sent.setdefault(_relative(workspace, action), {})[old] = None
    return {path: tuple(olds) for path, olds in sent.items()}


def _unchanged(workspace: Workspace) -> dict[str, bytes]:
    """The bytes of each file seen that still holds what the model was shown, read once a
    turn for both the edits offered and the reads left out."""
    kept = {}
    for path, digest in workspace.read_digests.items():
        try:
            data = workspace.paths.read_bytes(path, workspace.policy.max_ranged_file_bytes)
        except (AgentError, OSError, ValueError):
            continue
        if sha256_hex(data) == digest:
            kept[path] = data
    return kept


def _ranges(artifacts: Iterable[str]) -> str | None:
    """The reserved paths of byte ranges of these externalized results (context/evidence.py)."""
    ids = sorted(set(artifacts))
    if not ids:
        return None
    return f"{literal_pattern(ARTIFACT_FOLDER)}({'|'.join(ids)})/bytes/[0-9]+-[0-9]+"


def _relative(workspace: Workspace, action: ToolAction) -> str:
    try:
        resolved = workspace.resolve_path(str(action.arguments.get("path", ".")))
    except (AgentError, OSError, ValueError):
        return ""
    return workspace.paths.relative(resolved)


def _under(path: str, folders: set[str]) -> bool:
    """Whether `path` is in one of `folders` or is one (a search names the files it found,
    and then a ranged read of one is its next step)."""
    return "." in folders or any(path == item or path.startswith(item + "/") for item in folders)


def _parent(path: str) -> str:
    return str(PurePosixPath(path).parent)
