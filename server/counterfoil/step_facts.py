"""What a step tells the model beyond the course's sentence: the file it must read, the paths
that exist near one that does not, where an edit's old text nearly is, the loop it is in, and
what the root holds once a step changed it, a change that would leave a file unparseable
(refused) or a file a change left so, a refused change still to make once its file is read, the
task with what was done so far, and a phrase a search did not find.

Each is a fact kept on the step's `StepResult` (`detail`, `loop`, `syntax`, `tree`, `read_now`,
`progress`, `phrase`), or, for a first final answer the run's record does not bear out
(`FinalTooSoon`), on its `AgentEvent`. The model-facing text is built from the fact, so no
layer reads it back out of the text. Two more are kept for the layers above, not told: the
lines a ranged read showed (`lines`) and how many lines a search found (`search`).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

MAX_SHOWN_DIFFERENCES = 3
NOT_ACCESSIBLE = "path is not accessible"  # the course's words for a path it may not see
MAX_SHOWN_SPAN = 60
MAX_SHOWN_DONE = 4  # the latest effects a TaskProgress lists
# How a note shows the final answer: its value a placeholder, refused as an answer.
FINAL_EXAMPLE = '{"final": "<what you changed>"}'


@dataclass(frozen=True)
class NoSuchPath:
    """A path that does not exist, and the existing paths closest to it by name."""

    path: str
    nearby: tuple[str, ...]

    def sentence(self) -> str:
        if not self.nearby:
            return f"no such file: {self.path}; the project folder is empty"
        return f"no such file: {self.path}; nearby: {', '.join(self.nearby)}"


@dataclass(frozen=True)
class NotAFolder:
    """A listing asked of a file (a small model listed `greet.py` to find it): it is there,
    and read_file reads it."""

    path: str

    def sentence(self) -> str:
        return f"{self.path} is a file, not a folder: read it with read_file"


@dataclass(frozen=True)
class ReadFirst:
    """A change to a file the model has not read: the file to read first, or, once the loop
    has read a short one for it (`text`, as read_file returned it), what the file holds."""

    path: str
    text: str | None = None

    def sentence(self) -> str:
        if self.text is not None:
            # Shown the file and nothing more, the 1.5B went on to the task's next part and
            # left this change unmade.
            shown = self.text if self.text.endswith("\n") else self.text + "\n"
            return (
                f"read the existing file before changing it: {self.path}; nothing was changed."
                f" It is read for you now, and holds:\n{shown}Your change to {self.path} is"
                " still to make: send it again, made against this text."
            )
        return (
            f"read the existing file before changing it: {self.path} (read it with read_file,"
            " then change it)"
        )


@dataclass(frozen=True)
class Difference:
    """One span where the edit's old text and the file's closest lines disagree."""

    old: str  # what the old text has there ("" where it lacks what the file has)
    file: str  # what the file has there


@dataclass(frozen=True)
class EditMiss:
    """An edit's old text did not occur exactly once: how often it did, and (not found) the
    file's lines closest to it with what differs; (found more than once) where it occurs."""

    path: str
    found: int
    first_line: int | None = None  # of `lines` in the file, from 1
    lines: tuple[str, ...] = ()
    differences: tuple[Difference, ...] = ()
    at_lines: tuple[int, ...] = ()  # where a repeated old text starts

    def sentence(self) -> str:
        times = "1 time" if self.found == 1 else f"{self.found} times"
        head = f"old text must occur exactly once in {self.path}; found {times}"
        if self.found > 1:
            where = ", ".join(str(line) for line in self.at_lines)
            return f"{head} (at lines {where}); include more of the lines around it in old"
        if self.first_line is None or not self.lines:
            return head
        last = self.first_line + len(self.lines) - 1
        span = (
            f"line {self.first_line}"
            if last == self.first_line
            else (f"lines {self.first_line}-{last}")
        )
        closest = json.dumps("\n".join(self.lines), ensure_ascii=False)
        parts = [f"{head}. The closest text, {span}, as a JSON string: {closest}"]
        if self.differences:
            parts.append("What differs (your old text → the file):")
            parts += [f"{_quoted(item.old)} → {_quoted(item.file)}" for item in self.differences]
        parts.append("Copy old exactly from the file, or read it again with read_file.")
        return "\n".join(parts)


@dataclass(frozen=True)
class ActionLoop:
    """The model repeated itself with nothing new to see: one action sent again in a row with
    the same result, or a round of two or three (A, B, A; A, B, C, A); the actions as the
    model wrote them."""

    actions: tuple[dict[str, Any], ...]  # {"tool": …, …}
    # A file the task refers to that is still unread: the grammar offers no change until it
    # is read, so that read is what to do instead.
    read_next: str | None = None
    edit_tool: str = "edit_file"  # the run's tool that changes part of a file

    def sentence(self) -> str:
        shown = " and ".join(json.dumps(action, separators=(",", ":")) for action in self.actions)
        if len(self.actions) == 1:
            head = (
                f"you sent {shown} again and got the same result; sending it once more ends"
                " the run."
            )
        else:
            every = "both" if len(self.actions) == 2 else "all"
            head = f"repeated actions with no new result: {shown} were {every} answered already."
        return (
            f"{head} Do not repeat it; instead {self._instead()}, or reply with your final answer."
        )

    def _instead(self) -> str:
        if self.read_next is not None:
            call = {"tool": "read_file", "path": self.read_next}
            return f"read the file the task refers to: {json.dumps(call)}"
        tools = {str(action.get("tool")) for action in self.actions}
        if tools <= {"search_files", "list_files"}:
            return "read a file from the project's files with read_file, or search for one word"
        if tools <= {"read_file", "search_files", "list_files"}:
            return f"change the file the task is about with {self.edit_tool} or write_file"
        return "read the file again with read_file and do something else"


@dataclass(frozen=True)
class SyntaxProblem:
    """A file a write or an edit left unparseable in its format (JSON, Python, TOML): where the
    parser stopped and why, so the model fixes it before it finishes; `before`, the file's text
    before the change when that parsed and is short (a small model that wrote prose over a JSON
    file reads its broken text back and cannot tell what the file was)."""

    path: str
    language: str
    line: int | None
    message: str
    before: str | None = None

    def sentence(self) -> str:
        where = "" if self.line is None else f" at line {self.line}"
        head = f"{self.path} is not valid {self.language} now{where}: {self.message}."
        if self.before is None:
            return f"{head} Read it and fix it before you finish."
        return (
            f"{head} Before this change it was valid {self.language}, as a JSON string:"
            f" {json.dumps(self.before)}. Write it again as valid {self.language} with the change"
            " the task asks for before you finish."
        )


MAX_AROUND_LINES = 2  # lines shown either side of where a refused change stops parsing
MAX_AROUND_CHARS = 200  # characters of each such line


@dataclass(frozen=True)
class BreaksFile:
    """A write or an edit whose result would not parse in the file's format, while the file
    parsed before (or is new): refused before the person is asked, nothing written (a small
    model was told "not valid JSON now" after the write, and never recovered the file). The
    model is told where the parser stopped, the lines of its text around it (`around`: line
    numbers and text) and what the file was (`problem.before`, when short; `new` when there
    was no file)."""

    tool: str
    problem: SyntaxProblem
    around: tuple[tuple[int, str], ...] = ()
    new: bool = False
    edit_tool: str = "edit_file"  # the run's tool that changes part of a file

    def sentence(self) -> str:
        problem = self.problem
        where = "" if problem.line is None else f" at line {problem.line}"
        head = (
            f"refused: your {self.tool} would leave {problem.path} not valid {problem.language}"
            f"{where}: {problem.message}. Nothing was changed and no one was asked."
        )
        lines = [head, *text_there(self.around)]
        if self.new:
            lines.append(
                f"{problem.path} is a new file: its text must be valid {problem.language}."
            )
        elif problem.before is not None:
            lines.append(
                f"Before, {problem.path} was valid {problem.language}, as a JSON string:"
                f" {json.dumps(problem.before, ensure_ascii=False)}"
            )
        else:
            lines.append(f"{problem.path} is valid {problem.language} now: read_file shows it.")
        lines.append(
            f"Send the change again so that {problem.path} stays valid {problem.language}"
            + (f" ({self.edit_tool} changes only the lines you name)." if not self.new else ".")
        )
        return "\n".join(lines)


@dataclass(frozen=True)
class UndefinedName:
    """A change that would leave a Python module reading names nothing defines (`names`: each
    with the first line that reads it), which it did not before: refused before the person is
    asked, like a change that does not parse. A small model renaming a function rewrote the
    caller's `def` line with another signature, and its body kept a parameter that was gone."""

    tool: str
    path: str
    names: tuple[tuple[str, int], ...]
    around: tuple[tuple[int, str], ...] = ()

    def sentence(self) -> str:
        listed = ", ".join(f"{name} (line {line})" for name, line in self.names)
        head = (
            f"refused: your {self.tool} would leave {self.path} using a name nothing in it"
            f" defines: {listed}. Nothing was changed and no one was asked."
        )
        lines = [head, *text_there(self.around)]
        lines.append(
            "Send the change again so that each name it uses is defined: a parameter, an"
            " assignment or an import (read_file shows the file as it is now)."
        )
        return "\n".join(lines)


def text_there(around: tuple[tuple[int, str], ...]) -> list[str]:
    """The lines of a refused change's text around where it breaks, numbered as in the file."""
    if not around:
        return []
    return ["Your text there:", *(f"{number:>4}| {text}" for number, text in around)]


def lines_around(text: str, line: int | None) -> tuple[tuple[int, str], ...]:
    """The numbered lines of `text` around `line` (from 1), each cut to a readable length."""
    if line is None:
        return ()
    rows = text.splitlines()
    first = max(1, line - MAX_AROUND_LINES)
    last = min(len(rows), line + MAX_AROUND_LINES)
    return tuple(
        (number, _cut(rows[number - 1], MAX_AROUND_CHARS)) for number in range(first, last + 1)
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class SameMeaning:
    """A write or an edit that changed a file's bytes but not what they mean in its format: the
    same JSON value, the same Python code, the same TOML values (a small model rewrote
    `config.json` and `answer.py` in its own layout with the value the task asked it to change
    untouched, and finished)."""

    path: str
    language: str  # "JSON", "Python", "TOML"

    def sentence(self) -> str:
        what = {"JSON": "JSON value", "Python": "Python code", "TOML": "TOML values"}
        return (
            f"{self.path} holds the same {what.get(self.language, self.language)} as before this"
            " change; only its layout differs. Nothing in it that the task asks to change has"
            " changed yet."
        )


@dataclass(frozen=True)
class AlreadyHolds:
    """A write or an edit whose result is the bytes already on disk. When this run wrote them
    (`by_run`), the model is told what the record shows is done and asked for its final
    answer (a small model solved a task at step 3, then sent the same write until the run
    ended at the repeated-action limit); `done` and `unchecked` are the loop's, as in
    `TaskProgress`."""

    path: str
    by_run: bool
    done: tuple[str, ...] = ()
    unchecked: tuple[tuple[str, ...], ...] = ()

    def sentence(self) -> str:
        head = f"nothing to write: {self.path} already holds exactly these bytes"
        if not self.by_run:
            return head
        lines = [f"{head}, written by this run."]
        if self.done:
            lines.append(f"Done: {'; '.join(self.done[-MAX_SHOWN_DONE:])}.")
        if self.unchecked:
            lines.append(
                f"Next: {json.dumps({'tool': 'run_command', 'argv': list(self.unchecked[0])})}"
            )
        else:
            lines.append(
                f"Next: if the task is done, {FINAL_EXAMPLE} in your own words; else the next"
                " change the task asks for."
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class CopiedText:
    """A value the model copied from text the system showed it (the task, a line of the system
    prompt, a note, a refusal, a path) instead of writing its own: a small model answered final
    with the progress note word for word, and wrote a module's path as its whole content."""

    argument: str  # "final", "content", "old", "new"
    source: str  # what it copies, in words: "the task", "a note from the system", "a file's path"

    def sentence(self) -> str:
        if self.argument == "final":
            return (
                f"your final answer repeats {self.source} word for word; it is not an answer."
                f" Reply {FINAL_EXAMPLE} in your own words, or make the next"
                " tool call if the task is not done."
            )
        instead = {
            "old": "copy old from the file's lines as read_file showed them",
            "content": "write the file's whole new text",
            "new": "write the text that replaces old",
        }.get(self.argument, "use a value of your own")
        return f"{self.argument} repeats {self.source} word for word, not file text: {instead}."


@dataclass(frozen=True)
class ReadNow:
    """A file just read after a change to it was refused for not having been read: the
    refused change is still to be made (a small model reads the file and moves on)."""

    path: str
    tool: str  # the refused change's tool
    edit_tool: str = "edit_file"  # the run's tool that changes part of a file

    def sentence(self) -> str:
        edit = (
            "patch_file (its lines copied exactly from the text above)"
            if self.edit_tool == "patch_file"
            else "edit_file (old copied exactly from the text above)"
        )
        return (
            f"{self.path} is read now (your {self.tool} on it was refused only because it had"
            f" not been read): change it now as the task asks, with {edit} or write_file (the"
            " whole new text)."
        )


@dataclass(frozen=True)
class TaskProgress:
    """The task again and the effects done so far (files written, commands run), told after
    each file written: over many turns a small model loses the first message and finishes with
    parts of the task undone. Not after a command, whose output the model reads whole."""

    task: str
    done: tuple[str, ...]
    # The commands this run may run, when none has run since an edit or a write last changed a
    # file: a small model wrote one file and claimed the test had passed.
    unchecked: tuple[tuple[str, ...], ...] = ()
    # The first part of the task the record shows not done, as `FinalTooSoon` names it (None:
    # none it can name). Told "the rest of the task", the 1.5B wrote the file it had just
    # fixed again, twice, with the task's other files untouched; given the next call once its
    # final answer was held, it made it every time.
    next_step: str | None = None
    # No part the record can name is left: the files the task names changed, no command left
    # to run, none failing.
    settled: bool = False

    def sentence(self) -> str:
        shown = list(self.done[-MAX_SHOWN_DONE:])
        if len(self.done) > MAX_SHOWN_DONE:
            shown.insert(0, f"{len(self.done) - MAX_SHOWN_DONE} earlier")
        lines = [
            "Progress (the run's record, not an answer):",
            f"- task: {self.task}",
            f"- done: {'; '.join(shown)}",
        ]
        if self.unchecked:
            commands = " or ".join(shlex.join(argv) for argv in self.unchecked[:2])
            lines.append(
                f"- not checked yet: no command has run since the last change ({commands})"
            )
        if self.settled:
            lines.append(
                "- next: the record shows no part of the task left; if none is, reply"
                f" {FINAL_EXAMPLE}"
            )
        else:
            first = "the rest of the task" if self.next_step is None else self.next_step
            lines.append(f"- next: {first}; once all of the task is done, {FINAL_EXAMPLE}")
        return "\n".join(lines)


@dataclass(frozen=True)
class FinalTooSoon:
    """A final answer that the run's record does not bear out, answered with what the record
    shows instead of ending the run (a final with nothing done since the last one so answered
    ends it). A small model told the task's remaining parts after each change still answered
    "done" with a file written and nothing run, or with the file written back unchanged. Only
    facts of the run are named: files whose writes left their meaning as it was, files the
    task names that this run did not change (`unread`: those the model has not read either),
    names it gives that do not exist, and the commands not run since the last change. The
    model is given the first of these as its next call: told only to "reply with final again"
    once done, it replied with the same final at once."""

    task: str
    done: tuple[str, ...]
    unchecked: tuple[tuple[str, ...], ...] = ()
    layout_only: tuple[str, ...] = ()
    untouched: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()
    # Files the task names that an allowed command names too: taken as the task's check, not
    # as files to change (said when the final answer is taken).
    as_check: tuple[str, ...] = ()
    # Allowed commands whose last run since the last change did not pass.
    failing: tuple[tuple[str, ...], ...] = ()
    # Files the task refers to by their kind alone ("the JSON defaults", its only JSON file)
    # that the model has not read: where the value the task asks for is.
    unread_sources: tuple[str, ...] = ()
    edit_tool: str = "edit_file"  # the run's tool that changes part of a file

    def __bool__(self) -> bool:
        return bool(
            self.unchecked
            or self.layout_only
            or self.untouched
            or self.missing
            or self.failing
            or self.unread_sources
        )

    def taken_as_check(self) -> str | None:
        """What the run says when the check took the final answer with files left unchanged
        because an allowed command names them, or None."""
        if not self.as_check:
            return None
        names = ", ".join(self.as_check)
        return (
            f"not checked as files to change: {names} (named by an allowed command, taken as"
            " the task's check)"
        )

    def sentence(self) -> str:
        shown = list(self.done[-MAX_SHOWN_DONE:])
        if len(self.done) > MAX_SHOWN_DONE:
            shown.insert(0, f"{len(self.done) - MAX_SHOWN_DONE} earlier")
        lines = [
            "Not ended yet: your answer says the task is done; this run's record does not show it.",
            f"- task: {self.task}",
            f"- done: {'; '.join(shown) if shown else 'nothing changed'}",
            "Not done by this run:",
        ]
        lines += [
            f"- {path} (what the task refers to) has not been read." for path in self.unread_sources
        ]
        lines += [
            f"- {path} was written with the same meaning as before." for path in self.layout_only
        ]
        lines += [f"- {path} (named by the task) is unchanged." for path in self.untouched]
        lines += [f"- {path} (named by the task) does not exist." for path in self.missing]
        if self.unchecked:
            commands = " or ".join(shlex.join(argv) for argv in self.unchecked[:2])
            lines.append(f"- No command has run since the last change ({commands}).")
        lines += [
            f"- {shlex.join(argv)} did not pass when it last ran, after the last change."
            for argv in self.failing
        ]
        lines.append(
            f"Your next reply: {self.next_step()}, for the first part not done. Where the task says"
            " to leave a file as it is, leave it."
        )
        return "\n".join(lines)

    def next_step(self) -> str:
        """The first thing to do, as a call where the record gives all of it."""
        for path in self.unread_sources:
            return json.dumps({"tool": "read_file", "path": path})
        for path in self.layout_only:
            return f"{self.edit_tool} on {path}, with new text that makes the change the task asks"
        for path in self.untouched:
            if path in self.unread:
                return json.dumps({"tool": "read_file", "path": path})
            return f"{self.edit_tool} on {path}, as the task asks"
        for path in self.missing:
            return f"write_file on {path}, with the content the task gives"
        for argv in self.failing:
            return f"a change that makes {shlex.join(argv)} pass (its output above says what fails)"
        return json.dumps({"tool": "run_command", "argv": list(self.unchecked[0])})


@dataclass(frozen=True)
class PhraseNotFound:
    """A search found nothing. For a phrase of several words: a search matches text as it is
    written on one line, and a small model searches for the task's own sentence. `unread`, the
    listed files it has not read yet (it copied "one word of it" as its next pattern; after a
    one-word search that found nothing, it finished)."""

    pattern: str
    unread: tuple[str, ...] = ()
    # The listed file the pattern names (a small model searched for "greet.py" to find it).
    file: str | None = None

    def sentence(self) -> str:
        if self.file is not None:
            return (
                f"no line of the project's files holds that text; {self.file} is a file of the"
                " project (its name is not in its text): read it with read_file."
            )
        if len(self.pattern.split()) < 3:
            head = "no line of the project's files matches that pattern."
            if not self.unread:
                return f"{head} Read the files the task is about with read_file."
        else:
            head = "no line holds that whole phrase (a search matches text as written on one line)."
        if not self.unread:
            return f"{head} Search for a single word instead."
        return (
            f"{head} Files you have not read yet: {', '.join(self.unread)}. Read the ones the"
            " task is about with read_file."
        )


@dataclass(frozen=True)
class LinesShown:
    """The lines a ranged read showed, of how many the file holds (its `[lines …]` header)."""

    start: int
    stop: int
    total: int

    def span(self) -> str:
        return f"lines {self.start:,}–{self.stop:,}"


@dataclass(frozen=True)
class SearchHits:
    """How many lines a search found, and whether it looked everywhere it was asked to (a
    search stopped at a limit may have missed a match)."""

    count: int
    complete: bool

    @property
    def none_found(self) -> bool:
        """Nothing matches anywhere it was asked to look."""
        return self.count == 0 and self.complete


@dataclass(frozen=True)
class KeptFromModel:
    """A path the gate keeps from the model (a protected name or pattern, the artifacts'
    reserved folder). The model is told only the course's words, the same as for a missing
    file, so it learns nothing of what exists; the person is told which rule holds."""

    path: str

    def sentence(self) -> str:
        return NOT_ACCESSIBLE


@dataclass(frozen=True)
class Placeholder:
    """An argument the model copied from the tool examples, not a value of its own."""

    argument: str
    value: str

    def sentence(self) -> str:
        return (
            f"{self.argument} {json.dumps(self.value)} is a placeholder from the tool examples;"
            " use a real value (paths from the project files)"
        )


@dataclass(frozen=True)
class OverviewFile:
    path: str
    size: int


@dataclass(frozen=True)
class OverviewFolder:
    """A folder shown as one line: its files were not listed (`files` None: not walked, a
    cache or past the walk's bound)."""

    path: str
    files: int | None
    size: int | None


OverviewEntry = OverviewFile | OverviewFolder


@dataclass(frozen=True)
class TreeOverview:
    """The root's files in walk order, folded to fit; `more`: root-level files left out past
    the budget; `complete`: the walk saw every entry."""

    entries: tuple[OverviewEntry, ...]
    more: int = 0
    complete: bool = True

    def paths(self) -> frozenset[str]:
        """What a refresh compares: the names shown, not their sizes."""
        return frozenset(entry.path for entry in self.entries)

    def file_paths(self) -> tuple[str, ...]:
        """The files listed, in the listing's order (folded folders left out)."""
        return tuple(entry.path for entry in self.entries if isinstance(entry, OverviewFile))


StepDetail = (
    NoSuchPath
    | NotAFolder
    | ReadFirst
    | EditMiss
    | Placeholder
    | KeptFromModel
    | BreaksFile
    | UndefinedName
    | AlreadyHolds
    | CopiedText
)


def _quoted(text: str) -> str:
    if not text:
        return "(nothing)"
    if len(text) > MAX_SHOWN_SPAN:
        text = text[: MAX_SHOWN_SPAN - 1] + "…"
    return json.dumps(text, ensure_ascii=False)
