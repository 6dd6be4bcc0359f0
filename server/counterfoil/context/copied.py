"""Text the system showed the model, as values the model may not hand back as its own: the
task, the system prompt's lines and example values, the notes, refusals and held-answer texts
the run told it, and the paths it was shown. A small model copies whatever is in front of it:
a final answer that was the progress note word for word, or the task; a module's path as the
module's whole content. Lines of files the model read are the model's to copy (an edit's `old`
is one) and are never counted as system text."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..actions import Action, FinalAction, ToolAction
from ..step_facts import CopiedText, ReadFirst

MIN_COPIED_CHARS = 12  # a shorter line ("done", "}") may be anyone's own words
CHECKED_ARGUMENTS = ("content", "old", "new")
# A final answer's example value in the system prompt and the notes: `{"final":"…"}`.
_FINAL_EXAMPLE = re.compile(r'\{\s*"final"\s*:\s*"([^"]+)"\s*\}')
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class SystemText:
    """What the system showed the model, by kind: whole texts (the task, each note), their
    lines, the example values, and the paths. `file_lines`: lines of files the model read,
    which are never counted as copies."""

    task: str
    texts: tuple[str, ...]
    paths: frozenset[str] = frozenset()
    file_lines: frozenset[str] = frozenset()

    def source(self, value: str, *, whole_lines: bool) -> str | None:
        """What `value` copies, in words, or None. `whole_lines`: a value made only of copied
        lines counts (a final answer); else only a whole text, line, example or path does."""
        norm = _norm(value)
        if not norm:
            return None
        if norm == _norm(self.task):
            return "the task"
        if norm in {_norm(path) for path in self.paths}:
            return "a file's path"
        if norm in self._examples():
            return "an example from the system prompt"
        # A file's text may hold the task's own lines (the line a task says to add): only a
        # final answer may not be made of them.
        lines = self._lines() if whole_lines else self._lines() - self._task_lines()
        if len(norm) < MIN_COPIED_CHARS:
            return None
        if norm in {_norm(text) for text in self.texts} or norm in lines:
            return "text the system showed you"
        if whole_lines:
            own = [_norm(line) for line in value.splitlines() if _norm(line)]
            if own and all(line in lines or line in self._task_lines() for line in own):
                return "text the system showed you"
        return None

    def _examples(self) -> set[str]:
        return {
            _norm(found)
            for text in self.texts
            for found in _FINAL_EXAMPLE.findall(text)
            if _norm(found)
        }

    def _lines(self) -> set[str]:
        lines = {_norm(line) for text in (self.task, *self.texts) for line in text.splitlines()}
        return {line for line in lines if len(line) >= MIN_COPIED_CHARS} - self.file_lines

    def _task_lines(self) -> set[str]:
        return {_norm(line) for line in self.task.splitlines() if _norm(line)}


def copied_value(action: Action, system: SystemText) -> CopiedText | None:
    """The argument of `action` that repeats system text unchanged, or None: a final answer (any
    that is made only of shown lines), or a write's `content` or an edit's `old`/`new` (a
    whole shown text, line, example or path)."""
    if isinstance(action, FinalAction):
        source = system.source(action.final, whole_lines=True)
        return None if source is None else CopiedText("final", source)
    if not isinstance(action, ToolAction) or action.tool not in ("write_file", "edit_file"):
        return None
    path = _norm(str(action.arguments.get("path", "")))
    for name in CHECKED_ARGUMENTS:
        value = action.arguments.get(name)
        if isinstance(value, str):
            own_path = bool(path) and _norm(value) == path
            source = "the file's path" if own_path else system.source(value, whole_lines=False)
            if source is not None:
                return CopiedText(name, source)
    return None


def file_lines(texts: Iterable[str]) -> frozenset[str]:
    """The lines of the files a run showed the model, as `SystemText.file_lines` holds them."""
    return frozenset(_norm(line) for text in texts for line in text.splitlines() if _norm(line))


def system_text(
    task: str,
    system_prompt: str,
    told: Sequence[str],
    paths: Iterable[str],
    read: Sequence[str],
) -> SystemText:
    """`told`: every text the run told the model besides what a tool returned (notes,
    refusals, held answers); `read`: what the model was shown of files."""
    return SystemText(task, (system_prompt, *told), frozenset(paths), file_lines(read))


def run_system_text(
    task: str, messages: Sequence[Mapping[str, str]], events: Iterable[Any], paths: Iterable[str]
) -> SystemText:
    """The system text of a run so far, from its messages (the system prompt) and its events
    (the loop's `AgentEvent`s): what each told the model beyond a tool's own result, and the
    files it showed."""
    prompt = next((m["content"] for m in messages if m.get("role") == "system"), "")
    told: list[str] = []
    read: list[str] = []
    for event in events:
        step, result, said = event.step_result, event.result, event.told
        if event.final_held is not None and said:
            told.append(said)
        elif step is None:
            if result:
                told.append(result)  # why a response gave no action
        elif step.is_error:
            told.append(said or result or "")
            if isinstance(step.detail, ReadFirst) and step.detail.text is not None:
                read.append(step.detail.text)
        else:
            action = event.action
            if isinstance(action, ToolAction) and action.tool == "read_file" and result:
                read.append(result)
            if said and result and said.startswith(result):
                told.append(said[len(result) :])  # the notes after a tool's result
    return system_text(task, prompt, told, paths, read)


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip()
