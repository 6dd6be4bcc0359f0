"""The agent loop: ask the model, parse one action, pass it through the gate, repeat."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from .actions import EXPECTED_FORM, Action, FinalAction, ToolAction, parse_action
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
from .final_check import FinalCheck, changed_tree, done_before, unchecked
from .gate.workspace import Workspace
from .loop_parts import LoopPart, OpeningRead, TurnRecord
from .mcp.toolbox import offered_listings
from .model import ConfiguresTools, Model, ModelReply, ResponseStats, configure, model_reply
from .opening_reads import OpeningReads, read_for_the_model, unread_sources
from .step_facts import (
    ActionLoop,
    AlreadyHolds,
    FinalTooSoon,
    PhraseNotFound,
    ReadFirst,
    ReadNow,
    TreeOverview,
)
from .steps import StepResult, error_text, refusal, step_taker
from .tools import edit_tool
from .verdict import RunVerdict, compute_verdict
from .workspace_view import CHANGES

Messages = list[dict[str, str]]
IDENTICAL_ACTION = "identical action loop detected"
IDENTICAL_ACTION_ERROR = error_text(IDENTICAL_ACTION)


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
    """The run's conversation, one record: the messages the model reads, which of them are
    observations (kept with the messages, so a follow-up run elides earlier turns' too), and
    the events the person reads, each told to `on_event` as it is recorded; `on_observation`
    is called at each complete observation, the one boundary a checkpoint is saved at."""

    messages: Messages
    observations: list[Observation]
    on_event: Callable[[AgentEvent], Any] | None = None
    on_observation: Callable[[Messages, ToolAction | None], Any] | None = None
    events: list[AgentEvent] = field(default_factory=list)

    def record(self, event: AgentEvent, reply: ModelReply | None = None) -> None:
        """The step's event, with what its response cost as the model's reply says (None: a
        read made for the model, which cost it nothing)."""
        if reply is not None:
            event = replace(event, response_stats=reply.stats, model_note=reply.note or None)
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def observe(
        self,
        response: str,
        text: str,
        action: ToolAction | None = None,
        taken: StepResult | None = None,
        shown: ShapedObservation | None = None,
    ) -> None:
        """The model's response and the tool result it read after it (`text`)."""
        self.messages += _turn(response, text)
        note_observation(
            self.observations,
            self.messages,
            action,
            taken,
            summary=None if shown is None else shown.summary,
            shows=None if shown is None else shown.shows,
            summary_shows=None if shown is None else shown.summary_shows,
        )

    def answer(self, response: str, text: str) -> None:
        """The model's final answer and what it was told instead of ending the run."""
        self.messages += [
            {"role": "assistant", "content": response},
            {"role": "user", "content": text},
        ]
        note_observation(self.observations, self.messages, None, None)

    def checkpoint(self, action: ToolAction | None) -> None:
        if self.on_observation is not None:
            self.on_observation(self.messages, action)


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
        messages if messages is not None else initial_messages(task, system_prompt),
        observations if observations is not None else [],
        on_event,
        on_observation,
    )
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
        observations=conversation.observations,
    )
    parts: list[LoopPart] = [FinalCheck(hold=limits.check_final_answer)]
    if limits.read_named_files:
        parts.insert(0, OpeningReads())
    turns = _Turns(task, generate, workspace, limits, conversation, window, parts, should_stop)
    return turns.go(fresh)


class _Turns:
    """One run's turn loop: ask the model, parse one action, take it through the gate, tell
    the model what happened; the loop's parts (`LoopPart`) add their reads and notes."""

    def __init__(
        self,
        task: str,
        generate: Callable[[Messages], str],
        workspace: Workspace,
        limits: AgentLimits,
        conversation: _Conversation,
        window: ContextWindow,
        parts: Sequence[LoopPart],
        should_stop: Callable[[], bool] | None,
    ) -> None:
        self.generate, self.limits, self.parts = generate, limits, parts
        self.conversation, self.window = conversation, window
        self.stopping = should_stop or (lambda: False)
        self.run = TurnRecord(task, workspace, step_taker(workspace), _overview(workspace))
        store = workspace.receipt_store if isinstance(workspace, Workspace) else None
        self.evidence = RunEvidence.of(store, limits.max_inline_chars, conversation.observations)
        self.invalid = 0  # responses that gave no valid action
        self.last_action: ToolAction | None = None
        self.repeats = 0  # how many times in a row `last_action` was asked for
        self.loops = 0  # rounds of actions (A, B, A) answered with what to try instead
        self.refused_unread: dict[str, str] = {}  # path: the tool of a change refused for it

    def go(self, fresh: bool) -> AgentRun:
        """The run from its first step (`fresh`: a new conversation, whose parts read first)
        or from where its conversation stands; a resumed run's earlier effects are done."""
        if fresh:
            for part in self.parts:
                for opened in part.opening(self.run):
                    self._opened(opened)
        else:
            self.run.done = done_before(self.run)
        for step in range(1, self.limits.max_steps + 1):
            ended = self._turn(step)
            if ended is not None:
                return ended
        return self._finish(False, "step_limit")

    def _opened(self, opened: OpeningRead) -> None:
        """A read made for the model: in the conversation as if the model had asked for it."""
        action, read = opened.action, opened.read
        self.conversation.record(
            AgentEvent(0, "", action, read.observation, read, opened=opened.path)
        )
        self.conversation.observe(_action_json(action), read.observation, action, read)

    def _finish(
        self, completed: bool, reason: str, final: str | None = None, error: str | None = None
    ) -> AgentRun:
        workspace = self.run.workspace
        return AgentRun(
            completed,
            reason,
            final,
            tuple(self.conversation.events),
            workspace.modified_files,
            error,
            run_verdict(workspace),
        )

    def _failed(self, error: Exception) -> AgentRun:
        """A model that failed (or stopped mid-response, once asked to stop) ends the run."""
        if self.stopping():
            return self._finish(False, "cancelled")
        return self._finish(False, "model_error", error=f"{type(error).__name__}: {error}")

    def _turn(self, step: int) -> AgentRun | None:
        """One model turn; the run's end, or None when it goes on."""
        if self.stopping():
            return self._finish(False, "cancelled")
        if not self.window.fits():
            return self._finish(False, "context_limit")
        generate, workspace = self.generate, self.run.workspace
        try:
            if isinstance(generate, ConfiguresTools) and (
                step == 1 or isinstance(workspace, Workspace)
            ):
                _configure_step(
                    generate,
                    workspace,
                    self.run.tree,
                    self.conversation.events,
                    elided=any(item.elided for item in self.conversation.observations),
                    read_first=unread_sources(self.run),
                )
            reply = model_reply(generate, list(self.conversation.messages))
        except Exception as error:  # noqa: BLE001 - a model failure ends the run with its reason
            return self._failed(error)
        response = reply.text
        if not isinstance(response, str):
            return self._finish(False, "model_error", error="model returned a non-string response")
        try:
            action = parse_action(response, workspace.available_tools)
        except AgentError as error:
            return self._invalid(step, response, reply, _cut_off(reply) or error)
        try:
            _refuse_copied(action, self.run.task, self.conversation, self.run.tree)
        except AgentError as error:
            return self._invalid(step, response, reply, error)
        if isinstance(action, FinalAction):
            return self._final(step, response, reply, action)
        self.repeats = self.repeats + 1 if action == self.last_action else 1
        self.last_action = action
        if self.repeats > self.limits.max_identical_actions:
            repeated = AgentEvent(
                step,
                response,
                None,
                IDENTICAL_ACTION_ERROR,
                no_action=IDENTICAL_ACTION,
                repeated=True,
            )
            self.conversation.record(repeated, reply)
            return self._finish(False, "repeated_action_limit")
        return self._act(step, response, reply, action)

    def _invalid(
        self, step: int, response: str, reply: ModelReply, error: AgentError
    ) -> AgentRun | None:
        """A response that gave no valid action: told why, counted toward the limit."""
        result = error_text(str(error))
        not_enabled = error.tool if isinstance(error, ToolNotEnabled) else None
        event = AgentEvent(
            step, response, None, result, no_action=str(error), not_enabled=not_enabled
        )
        self.conversation.record(event, reply)
        self.invalid += 1
        self.conversation.observe(response, result)
        if self.invalid >= self.limits.max_invalid_actions:
            return self._finish(False, "invalid_action_limit")
        self.conversation.checkpoint(None)
        return None

    def _final(
        self, step: int, response: str, reply: ModelReply, action: FinalAction
    ) -> AgentRun | None:
        """A final answer: held when a part says the record does not bear it out (the model
        is told what it shows and the run goes on), else the run's end."""
        calls = [part.final(self.run) for part in self.parts]
        held = next((call.held for call in calls if call.held is not None), None)
        if held is not None:
            text = held.sentence()
            event = AgentEvent(step, response, action, None, told=text, final_held=held)
            self.conversation.record(event, reply)
            self.conversation.answer(response, text)
            self.conversation.checkpoint(None)
            return None
        said = next((call.unchecked for call in calls if call.unchecked is not None), None)
        self.conversation.record(
            AgentEvent(step, response, action, None, final_unchecked=said), reply
        )
        self.conversation.messages.append({"role": "assistant", "content": response})
        return self._finish(True, "completed", action.final)

    def _act(
        self, step: int, response: str, reply: ModelReply, action: ToolAction
    ) -> AgentRun | None:
        """A tool call taken through the gate (or refused as a round of actions), with what
        the loop and its parts add for the model; the run's end when its effect could not be
        recorded or the model went round again after being told."""
        history = self.run.history
        loop = alternating_loop(action, history)
        read_next = next(iter(unread_sources(self.run)), None)
        editing = edit_tool(self.run.workspace.available_tools)
        if loop is not None:
            loop = replace(loop, read_next=read_next, edit_tool=editing)
            self.loops += 1
            taken, shown = _loop_step(loop), None
        elif self.evidence is None:
            taken, shown = self.run.take_step(action), None
        else:
            taken, shown = self.evidence.execute(action, self.run.take_step)
        again = self.repeats > 1 and loop is None and _same_again(taken, history[-1][1])
        if again:
            taken = replace(taken, loop=ActionLoop((_written(action),), read_next, editing))
        taken, shown = self._noted(action, taken, shown)
        history.append((action, taken))
        externalized = shown if shown is not None and shown.shows is not None else None
        shown = shown or ShapedObservation(taken.model_text())
        text = _told(shown.text, taken, again)
        told = None if text == taken.observation else text
        self.conversation.record(
            AgentEvent(step, response, action, taken.observation, taken, externalized, told=told),
            reply,
        )
        if taken.unrecorded is not None:
            return self._finish(False, "receipt_not_recorded", error=taken.unrecorded)
        if self.loops > 1:  # answered once with what to try instead, and looped again
            return self._finish(False, "repeated_action_limit")
        self.conversation.observe(response, text, action, taken, shown)
        self.conversation.checkpoint(action)
        return None

    def _noted(
        self, action: ToolAction, taken: StepResult, shown: ShapedObservation | None
    ) -> tuple[StepResult, ShapedObservation | None]:
        """The step's record with the facts told after it: the root's new overview, a file
        read for a refused change, a read that now allows one, what a repeated write already
        holds, where a phrase was not found, and each part's notes. A record rebuilt from a
        fact drops the shaped observation (its text is built again from the fact)."""
        run = self.run
        if changed_tree(taken) and run.tree is not None:
            tree = _overview(run.workspace)
            if tree is not None and tree.paths() != run.tree.paths():
                taken, run.tree = replace(taken, tree=tree), tree
        if run.tree is not None:
            read = read_for_the_model(taken, run.tree, run.take_step)
            if read is not taken:
                taken, shown = read, None
        editing = edit_tool(self.run.workspace.available_tools)
        taken = _with_read_now(taken, action, self.refused_unread, editing)
        if isinstance(taken.detail, AlreadyHolds) and taken.detail.by_run:
            # Bytes this run wrote, sent again: answered with what is done, never counted
            # toward the repeated-action limit.
            holds = replace(taken.detail, done=tuple(run.done), unchecked=unchecked(run))
            taken, shown, self.last_action = replace(taken, detail=holds), None, None
        if run.tree is not None and _phrase_not_found(action, taken):
            taken = replace(taken, phrase=_phrase(action, run.tree, run.history))
        for part in self.parts:
            taken = part.after_step(run, action, taken)
        return taken, shown


def _told(text: str, taken: StepResult, again: bool) -> str:
    """What the model reads after a step: its observation and the notes of the step's facts."""
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
    return text


def _phrase(
    action: ToolAction, tree: TreeOverview, history: Sequence[tuple[ToolAction, StepResult]]
) -> PhraseNotFound:
    """A search that matched nothing, with the listed files not read yet."""
    seen = {str(done.arguments.get("path")) for done, step in history if _was_read(done, step)}
    unread = tuple(path for path in tree.file_paths() if path not in seen)
    pattern = str(action.arguments["pattern"])
    return PhraseNotFound(pattern, unread[:MAX_UNREAD_SHOWN], _file_named(pattern, tree))


def _configure_step(
    generate: ConfiguresTools,
    workspace: Workspace,
    tree: TreeOverview | None,
    events: Sequence[AgentEvent],
    *,
    elided: bool = False,
    read_first: tuple[str, ...] = (),
) -> None:
    """Tell the model the run's tools and, on a receipt-keeping workspace, what it has been
    shown: the overview, its listings and its reads (`workspace_view`); the files read whole
    are taken as still in view only while no observation was `elided`; no change is offered
    while a file in `read_first` is unread, and no final answer right after one was held."""
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
            workspace,
            tree,
            steps,
            artifacts,
            () if elided else _shown_whole(events),
            read_first=read_first,
            final_offered=not events or events[-1].final_held is None,
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
        if any(changed_tree(step) for _, step in cycle):
            return None
        if isinstance(cycle[0][1].detail, ReadFirst):  # the read after it is what it asked for
            return None
        if action.tool == "read_file" and any(done.tool in CHANGES for done, _ in cycle[1:]):
            return None  # a change that missed says to read the file again: once is no loop
        return ActionLoop(tuple(_written(done) for done, _ in cycle))
    return None


def _loop_step(loop: ActionLoop) -> StepResult:
    return refusal(loop.sentence(), loop=loop)


MAX_LOOP_PERIOD = 3  # the longest round of actions (A, B, C, A) caught before the step limit
MAX_UNREAD_SHOWN = 8  # files a phrase that matched nothing lists as not read yet


def _no_turn_yet(messages: Messages | None) -> bool:
    return messages is not None and [message.get("role") for message in messages] == [
        "system",
        "user",
    ]


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


def _cut_off(reply: ModelReply) -> AgentError | None:
    """Why a response that does not parse ended, when the reply limit cut it: its JSON said as
    "not valid" left the 1.5B, its file's content cut in a loop of repeated lines, quoting
    that error as its final answer (told also that "nothing was done", it answered "I did
    nothing as instructed")."""
    stats = reply.stats
    if stats is None or stats.finish_reason != "length":
        return None
    return AgentError(
        f"response was cut off at the reply limit ({stats.generated_tokens} tokens) before its"
        f" JSON ended. Send a shorter action; {EXPECTED_FORM}"
    )


def _action_json(action: ToolAction) -> str:
    return json.dumps({"tool": action.tool, **action.arguments}, ensure_ascii=False)


def _with_read_now(
    taken: StepResult, action: ToolAction, refused_unread: dict[str, str], editing: str
) -> StepResult:
    """Note a change refused for an unread file; once a read shows that file, say so."""
    if isinstance(taken.detail, ReadFirst) and taken.detail.text is None:
        refused_unread[taken.detail.path] = action.tool
    elif _was_read(action, taken):
        tool = refused_unread.pop(str(action.arguments.get("path", "")), None)
        if tool is not None:
            return replace(taken, read_now=ReadNow(str(action.arguments["path"]), tool, editing))
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


def _written(action: ToolAction) -> dict[str, Any]:
    return {"tool": action.tool, **action.arguments}


def _same_again(step: StepResult, earlier: StepResult) -> bool:
    """A repeat that told the model nothing new: the same answer, nothing changed between."""
    return not changed_tree(earlier) and step.observation == earlier.observation


def _overview(workspace: object) -> TreeOverview | None:
    return workspace.overview() if isinstance(workspace, ShowsOverview) else None


def run_verdict(workspace: Workspace) -> RunVerdict:
    """The verdict of the effects this workspace has seen so far (none for the course's
    plain kind, which keeps no record of them)."""
    return compute_verdict(workspace.effect_outcomes if isinstance(workspace, Workspace) else ())


def _turn(response: str, result: str) -> Messages:
    return [
        {"role": "assistant", "content": response},
        {"role": "user", "content": "Tool result:\n" + result},
    ]
