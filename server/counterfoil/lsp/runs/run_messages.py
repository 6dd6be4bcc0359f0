"""A run as the editor reads it: each step's event, the run's result and verdict, the
receipts it wrote and the tools it may use (`counterfoil/status`' table), built from the core's
records as the messages of `protocol/`.

Everything here is plain data in, plain data out, so the shapes the extension relies on are
written down once and tested without a running server. See docs/protocol.md.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ... import protocol as messages
from ... import tools
from ...actions import Action, FinalAction, ToolAction
from ...gate.revert import revertable
from ...model_identity import identity_short
from ...protocol import wire
from ...step_facts import NoSuchPath
from ...steps import StepResult
from ...tools import example_action
from ...verdict import EffectOutcome, RunVerdict

if TYPE_CHECKING:
    from ...loop import AgentEvent, AgentRun
    from ...receipts import EffectReceipt

# Results and notifications: built from `messages`, turned into JSON data by `wire`


def receipt_message(receipt: EffectReceipt) -> messages.Receipt:
    """A receipt as the declared message, with whether revert can undo it (decided here, by
    the revert's own checks, so the editor only asks). The evidence is the log's, typed: what
    this version cannot read of it stays in the log and is not sent."""
    evidence = receipt.evidence
    model = None if evidence.approval is None else evidence.approval.model
    return messages.Receipt(
        **{item.name: getattr(evidence, item.name) for item in dataclasses.fields(evidence)},
        receipt_id=receipt.receipt_id,
        tool_call_id=receipt.tool_call_id,
        tool=receipt.tool,
        arguments=receipt.arguments,
        exit_state="ok" if receipt.exit_state == "ok" else "error",
        result=receipt.result,
        changed_artifacts=list(receipt.changed_artifacts),
        revertable=revertable(receipt),
        proposedBy=identity_short(None if model is None else model.as_record()),
    )


def action_message(action: Action | None) -> messages.ToolCall | messages.FinalAnswer | None:
    if isinstance(action, FinalAction):
        return messages.FinalAnswer(final=action.final)
    if isinstance(action, ToolAction):
        return messages.ToolCall(tool=action.tool, arguments=dict(action.arguments))
    return None


def event_message(
    event: AgentEvent,
    run_id: str | None,
    model_note: str | None = None,
    protected_by: str | None = None,
    enabled_by: str | None = None,
) -> messages.AgentEvent:
    """A step as the run panel renders it: the loop's event and the workspace's record of it,
    keyed by run id and call id."""
    return messages.AgentEvent(
        step=event.step,
        response=event.response,
        action=action_message(event.action),
        result=event.result,
        runId=run_id,
        modelNote=model_note,
        protectedBy=protected_by,
        shownToModel=shown_to_model(event),
        enabledBy=enabled_by,
        notEnabled=event.not_enabled,
        noAction=event.no_action,
        readForModel=event.opened,
        finalHeld=None if event.final_held is None else event.told,
        finalUnchecked=event.final_unchecked,
        **step_fields(event.step_result),
    )


def shown_to_model(event: AgentEvent) -> messages.ShownToModel | None:
    """What the model read of a result too long to show it whole (None: the result itself)."""
    shown = event.shown
    if shown is None or shown.shows is None:
        return None
    return messages.ShownToModel(
        text=shown.text, artifactId=shown.shows.artifact_id, byteCount=shown.shows.byte_count
    )


def step_fields(step: StepResult | None) -> dict[str, Any]:
    """What became of a step's call: its state, its receipt and the bytes that receipt keeps,
    and what the effect wrote or ran (`effect`, as in the verdict)."""
    record = messages.StepRecord(
        toolCallId=None if step is None else step.call_id,
        state=None if step is None else step.state,
        receiptId=None if step is None else step.receipt_id,
        outputSha256=None if step is None else step.output_sha256,
        resultSha256=None if step is None else step.result_sha256,
        reason=None if step is None else step_reason(step),
        effect=None if step is None or step.effect is None else effect_message(step.effect),
    )
    return {item.name: getattr(record, item.name) for item in dataclasses.fields(record)}


def step_reason(step: StepResult) -> str | None:
    """Why the call was not done: the effect's reason (a No's, the gate's), or for a call with no
    effect (a read the gate refused) the gate's sentence, so no reader takes it from the text.
    A path that does not exist is said as such to the person: the model's neutral words ("path
    is not accessible") are a protected path's too."""
    if step.effect is None and isinstance(step.detail, NoSuchPath):
        nearby = f"; nearby: {', '.join(step.detail.nearby)}" if step.detail.nearby else ""
        return f"no such path: {step.detail.path}{nearby}"
    return step.reason if step.effect is not None else step.error


def step_dict(step: StepResult | None) -> dict[str, Any]:
    shown: dict[str, Any] = wire(step_fields(step))
    return shown


def effect_message(outcome: EffectOutcome) -> messages.VerdictEffect:
    return messages.VerdictEffect(
        toolCallId=outcome.call_id,
        tool=outcome.tool,
        state=outcome.state,
        path=outcome.path,
        argv=None if outcome.argv is None else list(outcome.argv),
        sha256=outcome.sha256,
        exitStatus=outcome.exit_status,
        timedOut=outcome.timed_out,
        reason=outcome.reason,
        review=outcome.review,
        byRule=outcome.by_rule,
    )


def verdict_message(verdict: RunVerdict, completed: bool) -> messages.Verdict:
    return messages.Verdict(
        succeeded=completed and verdict.succeeded,
        approved=list(verdict.approved),
        rejected=list(verdict.rejected),
        refused=list(verdict.refused),
        failed=list(verdict.failed),
        reviewRejected=list(verdict.review_rejected),
        filesChanged=[
            messages.FileChanged(path=change.path, sha256=change.sha256, toolCallId=change.call_id)
            for change in verdict.files_changed
        ],
        validation=verdict.validation,
        validatedBy=verdict.validated_by,
        effects=[effect_message(outcome) for outcome in verdict.effects],
    )


def run_result(
    run: AgentRun, reason: str, model_usage: str | None, model: dict[str, Any] | None = None
) -> messages.RunResult:
    """The loop's run as its answer; `reason` is the run's or the daemon's (paused,
    interrupted), `model_usage` the model's counters over the run, `model` its identity."""
    return messages.RunResult(
        completed=run.completed,
        reason=reason,
        final=run.final,
        modifiedFiles=list(run.modified_files),
        error=run.error,
        verdict=verdict_message(run.verdict, run.completed),
        modelUsage=model_usage,
        proposedBy=identity_short(model),
    )


def failed_run(reason: str, error: str | None) -> messages.RunResult:
    """A run that ended before the agent loop could start (no model, no receipt log)."""
    return messages.RunResult(
        completed=False,
        reason=reason,
        final=None,
        modifiedFiles=[],
        error=error,
        verdict=verdict_message(RunVerdict(), False),
    )


def tool_table(enabled: frozenset[str]) -> list[messages.ToolInfo]:
    """The core's tool table as `counterfoil/status` reports it, in the order models see it."""
    return [
        messages.ToolInfo(
            name=tool.name,
            effect=tool.effect,
            enabled=tool.name in enabled,
            arguments=[
                messages.ToolArgument(name=item.name, type=item.type, required=item.required)
                for item in tool.arguments
            ],
            example=example_action(tool),
        )
        for tool in tools.TOOLS
    ]
