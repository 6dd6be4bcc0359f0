"""What the run's record shows against the model's final answer, and the progress note after
each change that names the next part not done.

The 1.5B answered final with files the task named untouched, with the check never run after its
change, or with the check failing; it also kept rewriting a file after every part was done. The
same facts answer all of these: the files the task names, the effects done, the commands the
model may run to check. `FinalCheck` holds a final answer the record does not bear out (once,
unless something was done since; `checkFinalAnswer`), and after each change tells the model
what was done and which part is next.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import PurePosixPath

from .actions import ToolAction
from .loop_parts import FinalCall, LoopPart, TurnRecord
from .opening_reads import named_files, referred_files
from .step_facts import FinalTooSoon, TaskProgress
from .steps import StepResult
from .tools import edit_tool
from .verdict import EffectOutcome

MAX_DONE_COMMAND = 80  # characters of a command's argv a TaskProgress line keeps
# A file name as a task writes one: a name, a dot and a few letters (not "e.g." or "0.2.0").
FILE_NAME = re.compile(r"(?<![\w./-])(?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{1,7}(?![\w/-]|\.\w)")


def done_line(effect: EffectOutcome) -> str:
    """One effect that was done, for `TaskProgress`: what changed or ran, and how it ended."""
    if effect.argv is not None:
        ended = "timed out" if effect.timed_out else f"exit status {effect.exit_status}"
        command = " ".join(effect.argv)
        if len(command) > MAX_DONE_COMMAND:
            command = command[: MAX_DONE_COMMAND - 1] + "…"
        return f"ran {command} ({ended})"
    if effect.mcp_tool is not None:
        return f"called {effect.mcp_tool}"
    verb = {"edit_file": "edited", "write_file": "wrote"}.get(effect.tool, effect.tool)
    return f"{verb} {effect.path}"


def done_before(run: TurnRecord) -> list[str]:
    """The effects a resumed run did before it stopped, as `TaskProgress` lists them."""
    return [done_line(outcome) for outcome in run.outcomes() if outcome.state == "approved"]


def changed_tree(step: StepResult) -> bool:
    """The step's effect was done: a write, an edit or a command may have changed the root."""
    return step.effect is not None and step.effect.state == "approved"


def unchecked(run: TurnRecord) -> tuple[tuple[str, ...], ...]:
    """The commands the model may run to check its changes, when none has run since an edit or
    a write last changed a file (nothing when it may run none). A change a command made itself
    does not count: running a command again would change the files again, and a failed run
    was run (its output is the model's to read)."""
    checks = run.checks()
    if not checks:
        return ()
    outcomes = run.outcomes()
    last_write = max(
        (
            index
            for index, outcome in enumerate(outcomes)
            if outcome.changed_files and not outcome.ran_command
        ),
        default=-1,
    )
    if any(o.ran_command and o.ran_on_the_root for o in outcomes[last_write + 1 :]):
        return ()
    return checks


def _failing(run: TurnRecord) -> tuple[tuple[str, ...], ...]:
    """The allowed commands whose last run, since a file was last changed, did not pass (none
    before the run changed a file: a failing test is where a fix starts). The 1.5B ran the
    task's failing test after a change that fixed nothing and answered final, saying it failed."""
    allowed = set(run.checks())
    last: dict[tuple[str, ...], bool] = {}
    changed = False
    for outcome in run.outcomes():
        if outcome.changed_files and not outcome.ran_command:
            changed, last = True, {}
        elif outcome.ran_command and outcome.argv in allowed and outcome.state == "approved":
            last[outcome.argv] = outcome.timed_out or outcome.exit_status != 0
    return tuple(argv for argv, failed in last.items() if failed) if changed else ()


def _changed_a_file(run: TurnRecord) -> bool:
    """Whether an edit or a write of this run (or the run it resumes) was done."""
    return any(item.changed_files and not item.ran_command for item in run.outcomes())


def _rejected(run: TurnRecord) -> bool:
    """The person said No to an effect of this run: the model's answer to that is its own."""
    return any(o.state == "rejected" or o.review == "rejected" for o in run.outcomes())


def _not_checked(run: TurnRecord, nothing_since_held: bool) -> str | None:
    """Why a final answer is taken without the check, as the run says it, or None."""
    if not run.task.strip():
        return None
    if not run.may_change_files():
        return "not checked: this run may change no file"
    if _rejected(run):
        return "not checked: a change was rejected in this run (the answer to a No is the model's)"
    if nothing_since_held:
        return "not checked again: nothing was done since the last final answer was held"
    return None


def _meaning(run: TurnRecord, steps: list[tuple[ToolAction, StepResult]]) -> dict[str, bool]:
    """Each file this run changed: whether a change to it meant something (not layout only)."""
    meaning: dict[str, bool] = {}
    for _, step in steps:
        effect = step.effect
        if changed_tree(step) and effect is not None and effect.argv is None and effect.path:
            meaning[effect.path] = meaning.get(effect.path, False) or step.same is None
    for outcome in run.outcomes():  # a resumed run's earlier parts too
        if outcome.state == "approved" and outcome.argv is None and outcome.wrote_file:
            assert outcome.path is not None
            meaning.setdefault(outcome.path, True)
    return meaning


def final_too_soon(
    run: TurnRecord, also: tuple[ToolAction, StepResult] | None = None
) -> FinalTooSoon | None:
    """What the run's record shows against a final answer now (see `FinalTooSoon`); None
    when the task is empty, the model may change nothing, or the person rejected an effect of
    this run (pressing the model on would ask again what they refused). A file an allowed
    command names (`python3 test_greet.py`) is the task's check, not a file to change.
    `also`: the step just taken, not yet in the run's history."""
    task, tree = run.task, run.tree
    if not task.strip() or not run.may_change_files() or _rejected(run):
        return None
    meaning = _meaning(run, run.history if also is None else [*run.history, also])
    layout_only = tuple(path for path, meant in meaning.items() if not meant)
    commands = () if run.gate is None else run.gate.policy.allowed_commands
    in_commands = {PurePosixPath(part).as_posix() for argv in commands for part in argv[1:]}
    named = () if tree is None else named_files(task, tree)
    untouched = tuple(path for path in named if path not in meaning and path not in in_commands)
    missing: tuple[str, ...] = ()
    if tree is not None and tree.complete:  # else a name not listed may still be there
        listed = set(tree.file_paths())
        # A file an allowed command names counts too: the command cannot pass without it (the
        # 1.5B, asked to write test_normalize.py and run it, answered with neither done).
        known = listed | {PurePosixPath(path).name for path in listed} | set(meaning)
        missing = tuple(
            dict.fromkeys(name for name in FILE_NAME.findall(task) if name not in known)
        )
    seen = {} if run.gate is None else run.gate.read_digests
    sources = () if tree is None else referred_files(task, tree)
    left = unchecked(run) if meaning else ()
    return FinalTooSoon(
        task.strip(),
        tuple(run.done),
        left,
        layout_only,
        untouched,
        missing,
        tuple(path for path in untouched if path not in seen),
        as_check=tuple(path for path in named if path in in_commands and path not in meaning),
        failing=() if left else _failing(run),
        unread_sources=tuple(path for path in sources if path not in seen and path not in meaning),
        edit_tool=edit_tool(run.workspace.available_tools),
    )


class FinalCheck(LoopPart):
    """The progress note after each change, and, with `hold` (`checkFinalAnswer`), a final
    answer held while the record shows a part not done, unless nothing was done since the
    last one so held."""

    def __init__(self, *, hold: bool) -> None:
        self.hold = hold
        self.held_after: int | None = None  # effects done when a final answer was last held

    def final(self, run: TurnRecord) -> FinalCall:
        if not self.hold:
            return FinalCall()
        said = _not_checked(run, self.held_after == len(run.done))
        if said is not None:
            return FinalCall(unchecked=said)
        left = final_too_soon(run)
        if left:
            self.held_after = len(run.done)
            return FinalCall(held=left)
        return FinalCall(unchecked=None if left is None else left.taken_as_check())

    def after_step(self, run: TurnRecord, action: ToolAction, taken: StepResult) -> StepResult:
        """After a change, the task, what was done and the next part not done. After a command
        only when the record names a part not done, or none at all once a file was changed
        (the 1.5B, every part done and the test passed, went on rewriting CHANGELOG.md to the
        step limit): its output is read whole."""
        effect = taken.effect
        if run.tree is None or not changed_tree(taken) or not run.task.strip():
            return taken
        assert effect is not None
        run.done.append(done_line(effect))
        left = final_too_soon(run, also=(action, taken))
        parts_left = left is not None and bool(
            left.untouched or left.missing or left.layout_only or left.unread_sources
        )
        settled = effect.argv is not None and left is not None and not left
        settled = settled and _changed_a_file(run)
        if effect.argv is not None and not parts_left and not settled:
            return taken
        progress = TaskProgress(
            run.task.strip(),
            tuple(run.done),
            unchecked(run),
            left.next_step() if left else None,
            settled=settled,
        )
        return replace(taken, progress=progress)
