"""What a proposed write or edit must pass before anyone is asked: a change that would break a
file that parsed (or is new) in its format is refused, and so is one that leaves a Python module
reading a name nothing defines; an edit whose `new` runs on past its `old` is read as replacing
through where it rejoins the file when only that reading parses (`edit_rejoin.py`). The model
is told where and what the file was; the person never sees the proposal."""

from __future__ import annotations

from ..actions import ToolAction
from ..errors import DetailedRefusal
from ..step_facts import BreaksFile, UndefinedName, lines_around
from .edit_rejoin import Rejoined, rejoined
from .python_names import introduced_names
from .syntax import file_format, parses, syntax_problem


def checked_change(
    action: ToolAction,
    path: str,
    base_text: str | None,
    proposed: str,
    parsed_files: tuple[str, ...] = (),
    edit_tool: str = "edit_file",
    asked_as: str | None = None,
) -> Rejoined | None:
    """Refuses a change to `path` (from `base_text`, None for a new file, to `proposed`) that
    would break it; returns the widened reading of a run-on edit, or None to take the change as
    written. A file that did not parse before may be changed (the written file's problem is
    told after the write). `edit_tool`: the run's tool that changes part of a file, and
    `asked_as`: the tool the model called (a patch is read as the edit it makes)."""
    problem = syntax_problem(path, proposed, base_text, parsed_files)
    if problem is None:
        _refuse_undefined(action.tool, path, base_text, proposed, parsed_files)
        return None
    if base_text is not None and not parses(path, base_text, parsed_files):
        return None
    if action.tool == "edit_file" and base_text is not None:
        found = rejoined(base_text, action.arguments["old"], action.arguments["new"])
        if found is not None and parses(path, found.text, parsed_files):
            _refuse_undefined(action.tool, path, base_text, found.text, parsed_files)
            return found
    detail = BreaksFile(
        asked_as or action.tool,
        problem,
        lines_around(proposed, problem.line),
        new=base_text is None,
        edit_tool=edit_tool,
    )
    where = "" if problem.line is None else f" at line {problem.line}"
    raise DetailedRefusal(
        f"change would leave {path} not valid {problem.language}{where}: {problem.message}",
        detail,
    )


def _refuse_undefined(
    tool: str, path: str, base_text: str | None, proposed: str, parsed_files: tuple[str, ...]
) -> None:
    """A Python module the change would leave reading a name nothing defines, which it did not
    before (`python_names.introduced_names`), is refused."""
    if file_format(path, parsed_files) != "python":
        return
    names = introduced_names(base_text, proposed, edit=tool == "edit_file")
    if not names:
        return
    name, line = next(iter(names.items()))
    detail = UndefinedName(tool, path, tuple(names.items()), lines_around(proposed, line))
    raise DetailedRefusal(
        f"change would leave {path} using a name nothing defines at line {line}: {name}",
        detail,
    )
