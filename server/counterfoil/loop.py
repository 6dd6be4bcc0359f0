"""The agent loop: ask the model, parse one action, pass it through the gate, repeat."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any, Protocol, runtime_checkable

from .actions import Action, FinalAction, ToolAction, parse_action
from .context.agents_file import AGENTS_FILE
from .context.artifacts import RunEvidence, ShapedObservation
from .context.budget import (
    MIN_INLINE_CHARS,
    ContextWindow,
    Observation,
    count_chars,
    note_observation,
)
from .context.copied import copied_value, run_system_text
from .context.prompt import ShowsOverview, build_system_prompt, refreshed_overview
from .context.shown_view import workspace_view
from .errors import AgentError, ToolNotEnabled
from .gate.workspace import Workspace
from .mcp.toolbox import offered_listings
from .model import ConfiguresTools, Model, ModelReply, ResponseStats, configure, model_reply
from .step_facts import (
    ActionLoop,
    AlreadyHolds,
    FinalTooSoon,
    OverviewFile,
    OverviewFolder,
    PhraseNotFound,
    ReadFirst,
    ReadNow,
    TaskProgress,
    TreeOverview,
)
from .steps import StepResult, error_text, refusal, step_taker
from .verdict import EffectOutcome, RunVerdict, compute_verdict

Messages = list[dict[str, str]]
IDENTICAL_ACTION = "identical action loop detected"
IDENTICAL_ACTION_ERROR = error_text(IDENTICAL_ACTION)


@runtime_checkable
class RecordsEffects(Protocol):
    """What a receipt-keeping workspace adds to the course's surface (`available_tools`,
    `execute`, `modified_files`): the error of an effect that ran but could not be recorded,
    which must end the run. A workspace without it is the course's plain kind."""

    unrecorded_effect: str | None


def initial_messages(task: str, system_prompt: str) -> Messages:
    if not isinstance(task, str) or not task.strip():
        raise ValueError("task must not be empty")
    return [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": task},
    ]


@dataclass(frozen=True)
class AgentLimits:
    """`max_context_tokens` (the model's context window) replaces the course's character
    limit as the budget when set. Either way, old reads are elided and old receipted effects
    compacted instead of ending the run, once the conversation passes `elide_above` of the
    budget and down to `elide_down_to` of it in one step. The gap keeps the prompt's prefix
    unchanged between steps; with no gap a little is elided every turn and the prefix changes
    each time. `max_inline_chars`: a result longer than this is externalized (see
    `artifacts.py`); None shows every result whole, as the course does."""

    max_steps: int = 8
    max_context_chars: int = 48_000
    max_invalid_actions: int = 3
    max_identical_actions: int = 2
    max_context_tokens: int | None = None
    elide_above: float = 0.85
    elide_down_to: float = 0.5
    # Read the short files the task names before the model's first step (step-0 events); off
    # for the course's loop, whose runs begin with the model's own first step.
    read_named_files: bool = False
    max_inline_chars: int | None = None
    # Answer a final answer the run's record does not bear out with what it shows
    # (`FinalTooSoon`) instead of ending the run, unless nothing was done since the last one so
    # answered; off for the course's loop, where a final answer ends the run.
    check_final_answer: bool = False

    def __post_init__(self) -> None:
        for name in (
            "max_steps",
            "max_context_chars",
            "max_invalid_actions",
            "max_identical_actions",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer")
        tokens = self.max_context_tokens
        if tokens is not None and (
            not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0
        ):
            raise ValueError("max_context_tokens must be a positive integer")
        above, down_to = self.elide_above, self.elide_down_to
        if not all(isinstance(value, (int, float)) for value in (above, down_to)) or not (
            0 < down_to <= above <= 1
        ):
            raise ValueError("elision needs 0 < elide_down_to <= elide_above <= 1")
        inline = self.max_inline_chars
        if inline is not None and (
            not isinstance(inline, int) or isinstance(inline, bool) or inline < MIN_INLINE_CHARS
        ):
            raise ValueError(f"max_inline_chars must be an integer of at least {MIN_INLINE_CHARS}")


@dataclass(frozen=True)
class AgentEvent:
    """One step: the model's response, the action parsed from it, the observation, and the
    record of what the gate did with it (`step_result`: None for a response that made no call).
    `result` is the course's string, the record's observation."""

    step: int
    response: str
    action: Action | None
    result: str | None
    step_result: StepResult | None = None
    # What the model read instead of `result` when it was too long to show whole: previews and
    # the artifact to read ranges of (None: the model read `result` itself).
    shown: ShapedObservation | None = None
    no_action: str | None = None  # why the response gave no action, when it gave none
    repeated: bool = False  # the action was the same once too often: the run ends here
    # The file read for the model before its first step (step 0, no response): a short file
    # the task names, in the conversation as if the model had asked for it.
    opened: str | None = None
    not_enabled: str | None = None  # the tool it asked for that this run has off
    # The whole text the model read after "Tool result:" when it is not `result`: a refusal's
    # fuller sentence, a note, the refreshed overview, or the externalized previews.
    told: str | None = None
    # What the response cost and the model's remark on it, from its reply (None: not said).
    response_stats: ResponseStats | None = None
    model_note: str | None = None
    # A final answer not taken as the run's end: what the record shows that it does not (the
    # model read `told`, and the run went on).
    final_held: FinalTooSoon | None = None
    # A final answer taken as the run's end without the check (`checkFinalAnswer` on): why, in
    # the words the run shows ("not checked: a change was rejected in this run").
    final_unchecked: str | None = None


@dataclass(frozen=True)
class AgentRun:
    completed: bool
    reason: str
    final: str | None
    events: tuple[AgentEvent, ...] | list[AgentEvent]
    modified_files: tuple[str, ...] = ()
    error: str | None = None
    verdict: RunVerdict = field(default_factory=RunVerdict)

    @property
    def responses(self) -> tuple[ResponseStats, ...]:
        """What each of this run's responses cost, in order, where its model said."""
        return tuple(
            event.response_stats for event in self.events if event.response_stats is not None
        )


@dataclass
class _Conversation:
    messages: Messages
    events: list[AgentEvent] = field(default_factory=list)

    def record(
        self,
        event: AgentEvent,
        reply: ModelReply | None,
        on_event: Callable[[AgentEvent], Any] | None,
    ) -> None:
        """The step's event, with what its response cost as the model's reply says (None: a
        read made for the model, which cost it nothing)."""
        if reply is not None:
            event = replace(event, response_stats=reply.stats, model_note=reply.note or None)
        self.events.append(event)
        if on_event is not None:
            on_event(event)


def run_agent(
    task: str,
    generate: Callable[[Messages], str],
    workspace: Workspace,
    limits: AgentLimits | None = None,
    on_event: Callable[[AgentEvent], Any] | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
    messages: Messages | None = None,
    count_tokens: Callable[[Messages], int] | None = None,
    observations: list[Observation] | None = None,
    resume: bool = False,
    on_observation: Callable[[Messages, ToolAction | None], Any] | None = None,
    instructions: str | None = None,
) -> AgentRun:
    """Run until a final answer or a limit; `should_stop` is asked before each model call, and
    a model call that fails once it says stop ends the run as cancelled.

    A `generate` with `configure_tools` (see `ConfiguresTools`) is told the enabled tools before
    each step and, on a receipt-keeping workspace, what it has shown the model so far (the
    grammar of the next action is built from it); on another, once.
        `messages` is the conversation, extended in place so the caller keeps it: empty, it is
    started with the system prompt and `task`; otherwise `task` continues it (see
    `continue_conversation`).
    With `limits.max_context_tokens`, tokens are counted by `count_tokens(messages)` (by
    default the model's own count when it is a `Model`), else estimated at about four
    characters a token. `observations` is the record of which messages are observations,
    extended in place like `messages`: keep it with them, and a follow-up run elides earlier
    turns' observations too. `instructions` (the project's AGENTS.md) end the system prompt.
    `resume`: `messages` were saved at a complete observation and continue as they are, with
    no new message from `task`. `on_observation(messages, action)` is called at each complete
    observation (the action, None for an invalid one, and its result both appended): the one
    boundary where a checkpoint can be saved.
    """
    limits = limits or AgentLimits()
    system_prompt = build_system_prompt(workspace, instructions)
    # A new conversation (the named files are read first): none given, or one a session began
    # for this run, holding only the system prompt and the task.
    fresh = not messages and not resume or _no_turn_yet(messages)
    if messages and not resume:
        continue_conversation(messages, task, system_prompt)
    elif messages is not None and not messages:
        messages += initial_messages(task, system_prompt)
    conversation = _Conversation(
        messages if messages is not None else initial_messages(task, system_prompt)
    )
    observations = observations if observations is not None else []
    if limits.max_context_tokens is not None:
        budget, counter = (
            limits.max_context_tokens,
            count_tokens or (generate.count_tokens if isinstance(generate, Model) else None),
        )
    else:
        budget, counter = limits.max_context_chars, count_chars
    window = ContextWindow(
        conversation.messages,
        budget,
        counter,
        high=limits.elide_above,
        low=limits.elide_down_to,
        observations=observations,
    )
    take_step = step_taker(workspace)
    store = workspace.receipt_store if isinstance(workspace, Workspace) else None
    evidence = RunEvidence.of(store, limits.max_inline_chars, observations)
    invalid = 0
    last_action: ToolAction | None = None
    repeats = 0
    history: list[tuple[ToolAction, StepResult]] = []  # the tool steps so far, in order
    loops = 0
    shown_tree = _overview(workspace)
    if fresh and limits.read_named_files and shown_tree is not None:
        for path, read_action, read in _opening_reads(task, shown_tree, take_step):
            conversation.record(
                AgentEvent(0, "", read_action, read.observation, read, opened=path),
                None,
                on_event,
            )
            conversation.messages += _turn(_action_json(read_action), read.observation)
            note_observation(observations, conversation.messages, read_action, read)
    refused_unread: dict[str, str] = {}  # path: the tool of a change refused for it
    # The effects done in this run, as TaskProgress lists them: a resumed run's earlier parts
    # are in its workspace's outcomes, not in this loop's history.
    done = (
        []
        if fresh
        else [
            _done_line(outcome)
            for outcome in getattr(workspace, "effect_outcomes", ())
            if outcome.state == "approved"
        ]
    )
    # How many effects were done when a final answer was last held (None: none held): a
    # final with nothing done since the last held one ends the run.
    held_after: int | None = None

    def finish(
        completed: bool, reason: str, final: str | None = None, error: str | None = None
    ) -> AgentRun:
        return AgentRun(
            completed,
            reason,
            final,
            tuple(conversation.events),
            workspace.modified_files,
            error,
            run_verdict(workspace),
        )

    for step in range(1, limits.max_steps + 1):
        if should_stop is not None and should_stop():
            return finish(False, "cancelled")
        if not window.fits():
            return finish(False, "context_limit")
        if isinstance(generate, ConfiguresTools) and (
            step == 1 or isinstance(workspace, Workspace)
        ):
            try:
                _configure_step(
                    generate,
                    workspace,
                    shown_tree,
                    conversation.events,
                    elided=any(item.elided for item in observations),
                )
            except Exception as error:  # noqa: BLE001 - like a model failure, it ends the run
                return finish(False, "model_error", error=f"{type(error).__name__}: {error}")
        try:
            reply = model_reply(generate, list(conversation.messages))
        except Exception as error:  # noqa: BLE001 - a model failure ends the run with its reason
            if should_stop is not None and should_stop():
                return finish(False, "cancelled")  # a model stopped mid-response
            return finish(False, "model_error", error=f"{type(error).__name__}: {error}")
        response = reply.text
        if not isinstance(response, str):
            return finish(False, "model_error", error="model returned a non-string response")
        try:
            action = parse_action(response, workspace.available_tools)
            _refuse_copied(action, task, conversation, shown_tree)
        except AgentError as error:
            result = error_text(str(error))
            conversation.record(
                AgentEvent(
                    step,
                    response,
                    None,
                    result,
                    no_action=str(error),
                    not_enabled=error.tool if isinstance(error, ToolNotEnabled) else None,
                ),
                reply,
                on_event,
            )
            invalid += 1
            conversation.messages += _turn(response, result)
            note_observation(observations, conversation.messages, None, None)
            if invalid >= limits.max_invalid_actions:
                return finish(False, "invalid_action_limit")
            if on_observation is not None:
                on_observation(conversation.messages, None)
            continue
        if isinstance(action, FinalAction):
            unchecked = _not_checked(task, workspace, held_after == len(done))
            held = (
                None
                if not limits.check_final_answer or unchecked is not None
                else _final_too_soon(task, workspace, history, done, shown_tree)
            )
            if held:
                held_after = len(done)
                text = held.sentence()
                event = AgentEvent(step, response, action, None, told=text, final_held=held)
                conversation.record(event, reply, on_event)
                conversation.messages += [
                    {"role": "assistant", "content": response},
                    {"role": "user", "content": text},
                ]
                note_observation(observations, conversation.messages, None, None)
                if on_observation is not None:
                    on_observation(conversation.messages, None)
                continue
            said = unchecked if limits.check_final_answer else None
            if said is None and held is not None:
                said = held.taken_as_check()
            ended = AgentEvent(step, response, action, None, final_unchecked=said)
            conversation.record(ended, reply, on_event)
            conversation.messages.append({"role": "assistant", "content": response})
            return finish(True, "completed", action.final)
        repeats = repeats + 1 if action == last_action else 1
        last_action = action
        if repeats > limits.max_identical_actions:
            repeated = AgentEvent(
                step,
                response,
                None,
                IDENTICAL_ACTION_ERROR,
                no_action=IDENTICAL_ACTION,
                repeated=True,
            )
            conversation.record(repeated, reply, on_event)
            return finish(False, "repeated_action_limit")
        loop = alternating_loop(action, history)
        if loop is not None:
            loops += 1
            taken, shown = _loop_step(loop), None
        elif evidence is None:
            taken, shown = take_step(action), None
        else:
            taken, shown = evidence.execute(action, take_step)
        again = repeats > 1 and loop is None and _same_again(taken, history[-1][1])
        if again:
            taken = replace(taken, loop=ActionLoop((_written(action),)))
        if _changed_tree(taken) and shown_tree is not None:
            tree = _overview(workspace)
            if tree is not None and tree.paths() != shown_tree.paths():
                taken, shown_tree = replace(taken, tree=tree), tree
        if (
            shown_tree is not None
            and (shown_read := _read_for_the_model(taken, shown_tree, take_step)) is not taken
        ):
            taken, shown = shown_read, None  # a refusal: its text is built again from the fact
        taken = _with_read_now(taken, action, refused_unread)
        if isinstance(taken.detail, AlreadyHolds) and taken.detail.by_run:
            # Bytes this run wrote, sent again: answered with what is done, never counted
            # toward the repeated-action limit.
            holds = replace(taken.detail, done=tuple(done), unchecked=_unchecked(workspace))
            taken, shown, last_action = replace(taken, detail=holds), None, None
        if shown_tree is not None and _phrase_not_found(action, taken):
            seen = {
                str(done.arguments.get("path")) for done, step in history if _was_read(done, step)
            }
            unread = tuple(path for path in shown_tree.file_paths() if path not in seen)
            pattern = str(action.arguments["pattern"])
            phrase = PhraseNotFound(
                pattern, unread[:MAX_UNREAD_SHOWN], _file_named(pattern, shown_tree)
            )
            taken = replace(taken, phrase=phrase)
        if shown_tree is not None and _changed_tree(taken) and task.strip():
            effect = taken.effect
            assert effect is not None
            done.append(_done_line(effect))
            left = _final_too_soon(task, workspace, [*history, (action, taken)], done, shown_tree)
            parts_left = left is not None and bool(
                left.untouched or left.missing or left.layout_only
            )
            # After a command only when the record names a part not done, or none at all once
            # a file was changed (the 1.5B, every part done and the test passed, went on
            # rewriting CHANGELOG.md to the step limit): its output is read whole.
            settled = (
                effect.argv is not None
                and left is not None
                and not left
                and _changed_a_file(workspace)
            )
            if effect.argv is None or parts_left or settled:
                progress = TaskProgress(
                    task.strip(),
                    tuple(done),
                    _unchecked(workspace),
                    left.next_step() if left else None,
                    settled=settled,
                )
                taken = replace(taken, progress=progress)
        history.append((action, taken))
        externalized = shown if shown is not None and shown.shows is not None else None
        shown = shown or ShapedObservation(taken.model_text())
        text = shown.text
        if again and taken.loop is not None:
            text += "\n\nNote: " + taken.loop.sentence()
        if taken.syntax is not None:
            text += "\n\nNote: " + taken.syntax.sentence()
        if taken.same is not None:
            text += "\n\nNote: " + taken.same.sentence()
        if taken.tree is not None:
            text += "\n\n" + refreshed_overview(taken.tree)
        if taken.phrase is not None:
            text += "\n\nNote: " + taken.phrase.sentence()
        if taken.read_now is not None:
            text += "\n\nNote: " + taken.read_now.sentence()
        if taken.progress is not None:
            text += "\n\n" + taken.progress.sentence()
        told = None if text == taken.observation else text
        conversation.record(
            AgentEvent(step, response, action, taken.observation, taken, externalized, told=told),
            reply,
            on_event,
        )
        unrecorded = workspace.unrecorded_effect if isinstance(workspace, RecordsEffects) else None
        if unrecorded is not None:
            return finish(False, "receipt_not_recorded", error=unrecorded)
        if loops > 1:  # answered once with what to try instead, and looped again
            return finish(False, "repeated_action_limit")
        conversation.messages += _turn(response, text)
        note_observation(
            observations,
            conversation.messages,
            action,
            taken,
            summary=shown.summary,
            shows=shown.shows,
            summary_shows=shown.summary_shows,
        )
        if on_observation is not None:
            on_observation(conversation.messages, action)
    return finish(False, "step_limit")


def _configure_step(
    generate: ConfiguresTools,
    workspace: Workspace,
    tree: TreeOverview | None,
    events: Sequence[AgentEvent],
    *,
    elided: bool = False,
) -> None:
    """Tell the model the run's tools and, on a receipt-keeping workspace, what it has been
    shown: the overview, its listings and its reads (`workspace_view`); the files read whole
    are taken as still in view only while no observation was `elided`."""
    view = None
    if isinstance(workspace, Workspace):
        steps = [
            (event.action, event.step_result)
            for event in events
            if isinstance(event.action, ToolAction) and event.step_result is not None
        ]
        artifacts = [
            ref.artifact_id
            for event in events
            if event.shown is not None
            for ref in (event.shown.shows, event.shown.summary_shows)
            if ref is not None
        ]
        view = workspace_view(
            workspace, tree, steps, artifacts, () if elided else _shown_whole(events)
        )
    configure(
        generate,
        workspace.available_tools,
        workspace.policy.allowed_commands,
        offered_listings(workspace),
        view,
    )


def continue_conversation(messages: Messages, task: str, system_prompt: str) -> None:
    """Append the person's next message to a kept conversation, in place.

    The system prompt is the current one (the same bytes when nothing changed, so a model's
    prompt cache still matches); after a tool result or the person's own message the new text
    joins that message, so roles keep alternating.
    """
    if not isinstance(task, str) or not task.strip():
        raise ValueError("task must not be empty")
    if messages[0].get("role") == "system":
        messages[0] = {"role": "system", "content": system_prompt}
    last = messages[-1]
    if last.get("role") == "user":
        messages[-1] = {"role": "user", "content": last["content"] + "\n\n" + task}
    else:
        messages.append({"role": "user", "content": task})


def alternating_loop(
    action: ToolAction, history: Sequence[tuple[ToolAction, StepResult]]
) -> ActionLoop | None:
    """`action` repeats the one two or three steps back and no step since changed anything, so
    its observation would be the one the model already has: the model is going round (A, B, A
    or A, B, C, A) with nothing new to see. Identical consecutive actions are the
    repeated-action check's."""
    if history and action == history[-1][0]:
        return None
    for period in range(2, MAX_LOOP_PERIOD + 1):
        cycle = history[-period:]
        if len(cycle) < period or action != cycle[0][0]:
            continue
        if any(_changed_tree(step) for _, step in cycle):
            return None
        if isinstance(cycle[0][1].detail, ReadFirst):  # the read after it is what it asked for
            return None
        if action.tool == "read_file" and any(done.tool in CHANGES for done, _ in cycle[1:]):
            return None  # a change that missed says to read the file again: once is no loop
        return ActionLoop(tuple(_written(done) for done, _ in cycle))
    return None


def _loop_step(loop: ActionLoop) -> StepResult:
    return refusal(loop.sentence(), loop=loop)


CHANGES = ("edit_file", "write_file")
MAX_LOOP_PERIOD = 3  # the longest round of actions (A, B, C, A) caught before the step limit
MAX_DONE_COMMAND = 80  # characters of a command's argv a TaskProgress line keeps
MAX_UNREAD_SHOWN = 8  # files a phrase that matched nothing lists as not read yet
MAX_READ_FOR_THE_MODEL = 2000  # bytes of a file a refused change or an opening read shows


def _read_for_the_model(
    taken: StepResult, tree: TreeOverview, take_step: Callable[[ToolAction], StepResult]
) -> StepResult:
    """A change refused because its file was not read: a short file is read now, through the
    gate like any read, and shown with the refusal (a small model lost two of its ten steps to
    the read it was told to make and the change it then had to propose again)."""
    if not isinstance(taken.detail, ReadFirst) or taken.detail.text is not None:
        return taken
    if not _short_file(tree, taken.detail.path):
        return taken
    read = take_step(ToolAction("read_file", {"path": taken.detail.path}))
    if read.is_error:
        return taken
    return replace(taken, detail=replace(taken.detail, text=read.observation))


def _short_file(tree: TreeOverview, path: str) -> bool:
    """A listed file short enough to show whole, judged before it is read: a read counts as
    the model's once done, so a file too long to show is never read for it."""
    return any(
        isinstance(entry, OverviewFile)
        and entry.path == path
        and entry.size <= MAX_READ_FOR_THE_MODEL
        for entry in tree.entries
    )


MAX_OPENING_READS = 3  # files the task names, read for the model before its first step


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


def _opening_reads(
    task: str, tree: TreeOverview, take_step: Callable[[ToolAction], StepResult]
) -> list[tuple[str, ToolAction, StepResult]]:
    """The opening files (see `opening_files`), each read through the gate like any read (a
    small model spent two of its ten steps reading files the task had named), each shown only
    when short."""
    reads = []
    for path in opening_files(task, tree):
        if not _short_file(tree, path):
            continue
        action = ToolAction("read_file", {"path": path})
        read = take_step(action)
        if not read.is_error:
            reads.append((path, action, read))
    return reads


def _no_turn_yet(messages: Messages | None) -> bool:
    return messages is not None and [message.get("role") for message in messages] == [
        "system",
        "user",
    ]


def _unchecked(workspace: Workspace) -> tuple[tuple[str, ...], ...]:
    """The commands the model may run to check its changes, when none has run since an edit or
    a write last changed a file (nothing when it may run none). A change a command made itself
    does not count: running a command again would change the files again, and a failed run
    was run (its output is the model's to read)."""
    policy = getattr(workspace, "policy", None)
    if policy is None or "run_command" not in workspace.available_tools:
        return ()
    outcomes = tuple(getattr(workspace, "effect_outcomes", ()))
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
    return tuple(policy.allowed_commands)


def _shown_whole(events: Sequence[AgentEvent]) -> tuple[str, ...]:
    """The files read whole, not externalized, and neither edited nor written since (the
    model then sees the file only as its read and its own change put together)."""
    whole: dict[str, None] = {}
    for event in events:
        action, step = event.action, event.step_result
        if not isinstance(action, ToolAction) or step is None or step.is_error:
            continue
        path = str(action.arguments.get("path"))
        if action.tool == "read_file" and step.lines is None:
            if event.shown is None or event.shown.shows is None:
                whole[path] = None
        elif action.tool in CHANGES:
            whole.pop(path, None)
    return tuple(whole)


def _changed_a_file(workspace: Workspace) -> bool:
    """Whether an edit or a write of this run (or the run it resumes) was done."""
    outcomes = getattr(workspace, "effect_outcomes", ())
    return any(item.changed_files and not item.ran_command for item in outcomes)


def _failing(workspace: Workspace) -> tuple[tuple[str, ...], ...]:
    """The allowed commands whose last run, since a file was last changed, did not pass (none
    before the run changed a file: a failing test is where a fix starts). The 1.5B ran the
    task's failing test after a change that fixed nothing and answered final, saying it failed."""
    policy = getattr(workspace, "policy", None)
    if policy is None or "run_command" not in workspace.available_tools:
        return ()
    allowed = {tuple(argv) for argv in policy.allowed_commands}
    last: dict[tuple[str, ...], bool] = {}
    changed = False
    for outcome in getattr(workspace, "effect_outcomes", ()):
        if outcome.changed_files and not outcome.ran_command:
            changed, last = True, {}
        elif outcome.ran_command and outcome.argv in allowed and outcome.state == "approved":
            last[outcome.argv] = outcome.timed_out or outcome.exit_status != 0
    return tuple(argv for argv, failed in last.items() if failed) if changed else ()


def _refuse_copied(
    action: Action, task: str, conversation: _Conversation, tree: TreeOverview | None
) -> None:
    """Raise the refusal of a final answer or a file's text that repeats what the system showed
    the model (see `context/copied.py`)."""
    paths = () if tree is None else tree.file_paths()
    system = run_system_text(task, conversation.messages, conversation.events, paths)
    copied = copied_value(action, system)
    if copied is not None:
        raise AgentError(copied.sentence())


def _not_checked(task: str, workspace: Workspace, nothing_since_held: bool) -> str | None:
    """Why a final answer is taken without the check, as the run says it, or None."""
    if not task.strip():
        return None
    if not any(tool in workspace.available_tools for tool in CHANGES):
        return "not checked: this run may change no file"
    outcomes = getattr(workspace, "effect_outcomes", ())
    if any(outcome.state == "rejected" or outcome.review == "rejected" for outcome in outcomes):
        return "not checked: a change was rejected in this run (the answer to a No is the model's)"
    if nothing_since_held:
        return "not checked again: nothing was done since the last final answer was held"
    return None


def _final_too_soon(
    task: str,
    workspace: Workspace,
    history: Sequence[tuple[ToolAction, StepResult]],
    done: Sequence[str],
    tree: TreeOverview | None,
) -> FinalTooSoon | None:
    """What the run's record shows against a final answer now (see `FinalTooSoon`); None
    when the task is empty, the model may change nothing, or the person rejected an effect of
    this run (pressing the model on would ask again what they refused). A file an allowed
    command names (`python3 test_greet.py`) is the task's check, not a file to change."""
    if not task.strip() or not any(tool in workspace.available_tools for tool in CHANGES):
        return None
    outcomes = getattr(workspace, "effect_outcomes", ())
    if any(outcome.state == "rejected" or outcome.review == "rejected" for outcome in outcomes):
        return None  # the person said No in this run: the model's answer to that is its own
    meaning: dict[str, bool] = {}  # each file this run changed: whether a change meant something
    for _, step in history:
        effect = step.effect
        if _changed_tree(step) and effect is not None and effect.argv is None and effect.path:
            meaning[effect.path] = meaning.get(effect.path, False) or step.same is None
    for outcome in outcomes:  # a resumed run's earlier parts too
        if outcome.state == "approved" and outcome.argv is None and outcome.wrote_file:
            assert outcome.path is not None
            meaning.setdefault(outcome.path, True)
    layout_only = tuple(path for path, meant in meaning.items() if not meant)
    policy = getattr(workspace, "policy", None)
    commands = () if policy is None else tuple(policy.allowed_commands)
    in_commands = {PurePosixPath(part).as_posix() for argv in commands for part in argv[1:]}
    untouched: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    if tree is not None:
        untouched = tuple(
            path
            for path in named_files(task, tree)
            if path not in meaning and path not in in_commands
        )
        if tree.complete:  # else a name not listed may still be there
            listed = set(tree.file_paths())
            known = listed | {PurePosixPath(path).name for path in listed} | set(meaning)
            known |= in_commands
            missing = tuple(
                dict.fromkeys(name for name in FILE_NAME.findall(task) if name not in known)
            )
    seen = getattr(workspace, "read_digests", {})
    unread = tuple(path for path in untouched if path not in seen)
    unchecked = _unchecked(workspace) if meaning else ()
    failing = () if unchecked else _failing(workspace)
    as_check = tuple(
        path
        for path in (() if tree is None else named_files(task, tree))
        if path in in_commands and path not in meaning
    )
    return FinalTooSoon(
        task.strip(),
        tuple(done),
        unchecked,
        layout_only,
        untouched,
        missing,
        unread,
        as_check=as_check,
        failing=failing,
    )


# A file name as a task writes one: a name, a dot and a few letters (not "e.g." or "0.2.0").
FILE_NAME = re.compile(r"(?<![\w./-])(?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{1,7}(?![\w/-]|\.\w)")


def _action_json(action: ToolAction) -> str:
    return json.dumps({"tool": action.tool, **action.arguments}, ensure_ascii=False)


def _with_read_now(
    taken: StepResult, action: ToolAction, refused_unread: dict[str, str]
) -> StepResult:
    """Note a change refused for an unread file; once a read shows that file, say so."""
    if isinstance(taken.detail, ReadFirst) and taken.detail.text is None:
        refused_unread[taken.detail.path] = action.tool
    elif _was_read(action, taken):
        tool = refused_unread.pop(str(action.arguments.get("path", "")), None)
        if tool is not None:
            return replace(taken, read_now=ReadNow(str(action.arguments["path"]), tool))
    return taken


def _file_named(pattern: str, tree: TreeOverview) -> str | None:
    """The listed file whose path, or a name only it has, is the whole pattern."""
    wanted = pattern.strip().strip("/")
    paths = tree.file_paths()
    if wanted in paths:
        return wanted
    named = [path for path in paths if PurePosixPath(path).name == wanted]
    return named[0] if len(named) == 1 else None


def _phrase_not_found(action: ToolAction, taken: StepResult) -> bool:
    """A search that matched nothing (a small model searched for "off-by-one", found nothing
    and finished)."""
    if action.tool != "search_files" or taken.is_error:
        return False
    return taken.search is not None and taken.search.none_found


def _was_read(action: ToolAction, step: StepResult) -> bool:
    return action.tool == "read_file" and not step.is_error


def _done_line(effect: EffectOutcome) -> str:
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


def _written(action: ToolAction) -> dict[str, Any]:
    return {"tool": action.tool, **action.arguments}


def _same_again(step: StepResult, earlier: StepResult) -> bool:
    """A repeat that told the model nothing new: the same answer, nothing changed between."""
    return not _changed_tree(earlier) and step.observation == earlier.observation


def _changed_tree(step: StepResult) -> bool:
    """The step's effect was done: a write, an edit or a command may have changed the root."""
    return step.effect is not None and step.effect.state == "approved"


def _overview(workspace: object) -> TreeOverview | None:
    return workspace.overview() if isinstance(workspace, ShowsOverview) else None


def run_verdict(workspace: Workspace) -> RunVerdict:
    """The verdict of the effects this workspace has seen so far."""
    return compute_verdict(getattr(workspace, "effect_outcomes", ()))


def _turn(response: str, result: str) -> Messages:
    return [
        {"role": "assistant", "content": response},
        {"role": "user", "content": "Tool result:\n" + result},
    ]
