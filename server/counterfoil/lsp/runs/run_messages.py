"""The JSON shapes of the daemon protocol, and the checks on what a client sends.

Everything here is plain data in, plain data out, so the shapes the extension relies on are
written down once and tested without a running server. See docs/protocol.md.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcServerError

from ... import protocol as messages
from ... import tools
from ...actions import Action, FinalAction, ToolAction
from ...gate.approval import Approval, clean_reason
from ...gate.revert import revertable
from ...gate.rules import RuleDecision
from ...model_identity import identity_short
from ...proposals import ChangeSetProposal, CommandProposal, McpProposal, ToolProposal
from ...protocol import wire
from ...step_facts import NoSuchPath
from ...steps import StepResult
from ...tools import example_action
from ...verdict import EffectOutcome, RunVerdict
from ..approvals.edit_preview import workspace_edit
from ..approvals.mcp_questions import mcp_call_preview

if TYPE_CHECKING:
    from ...loop import AgentEvent, AgentRun
    from ...receipts import EffectReceipt

RUN_IN_PROGRESS = -32001
NO_WORKSPACE = -32002
NO_CONVERSATION = -32003
RUN_REFUSED = -32005


class RunInProgress(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("a Counterfoil run is already in progress", RUN_IN_PROGRESS)  # type: ignore[no-untyped-call]


class NoWorkspace(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("no workspace folder is open", NO_WORKSPACE)  # type: ignore[no-untyped-call]


class NoConversationToContinue(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("no conversation to continue", NO_CONVERSATION)  # type: ignore[no-untyped-call]


class RunRefused(JsonRpcServerError):
    """A run that cannot be resumed or inspected: the message is the sentence that says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message, RUN_REFUSED)  # type: ignore[no-untyped-call]


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


# The confirm request


Preview = (
    messages.EditPreview
    | messages.CommandPreview
    | messages.ChangeSetPreview
    | messages.McpDefinitionPreview
    | messages.McpCallPreview
)
Asked = ToolProposal | McpProposal


def preview(proposal: Asked, root: Path) -> dict[str, Any]:
    """The preview as JSON data (what tests compare)."""
    data: dict[str, Any] = wire(preview_message(proposal, root))
    return data


def preview_message(proposal: Asked, root: Path) -> Preview:
    """What the person is shown: the exact argv, the exact MCP call, or the whole proposed file
    once and the same change as a WorkspaceEdit."""
    shown: Preview
    if isinstance(proposal, McpProposal):
        shown = mcp_call_preview(proposal)
    elif isinstance(proposal, ChangeSetProposal):
        shown = _change_set_preview(proposal, root)
    elif isinstance(proposal, CommandProposal):
        runs_as = proposal.runs_as
        shown = messages.CommandPreview(
            argv=list(proposal.argv),
            cwd=proposal.cwd,
            timeoutSeconds=proposal.timeout_seconds,
            runsAs=None
            if runs_as is None
            else messages.CommandRunsAs(
                mode=runs_as.mode, mechanism=runs_as.mechanism, network=runs_as.network
            ),
        )
    else:
        uri = (root / proposal.path).as_uri()
        removes = proposal.removes_file
        shown = messages.EditPreview(
            path=proposal.path,
            uri=uri,
            removesFile=removes,
            baseSha256=proposal.base_sha256,
            proposedSha256=None if removes else proposal.proposed_sha256,
            proposedText=None if removes else proposal.proposed_text,
            baseText=proposal.base_text,
            edit=workspace_edit(uri, proposal.base_text, proposal.proposed_text, removes),
            reverts=proposal.reverts,
            newFolders=list(proposal.new_folders) or None,
        )
    return shown


def _change_set_preview(proposal: ChangeSetProposal, root: Path) -> messages.ChangeSetPreview:
    """A revert's or a reviewed command's files: each with what is there now and what it gets."""
    ran = proposal.ran
    return messages.ChangeSetPreview(
        reverts=proposal.reverts,
        files=[
            messages.ChangedFile(
                path=item.path,
                uri=(root / item.path).as_uri(),
                expectedSha256=item.expected_sha256,
                contentSha256=item.content_sha256,
                removesFile=item.content is None,
                currentText=_text_or_none(item.current),
                proposedText=_text_or_none(item.content),
                mode=item.mode,
                currentMode=item.current_mode,
                changesMode=item.changes_mode,
                madeFolders=list(item.made_folders) or None,
            )
            for item in proposal.files
        ],
        leftAlone=[messages.LeftAlone(path=path, why=why) for path, why in proposal.left_alone],
        ran=None
        if ran is None
        else messages.CommandRan(
            argv=list(ran.argv),
            exitStatus=ran.exit_status,
            timedOut=ran.timed_out,
            mode=ran.mode,
            mechanism=ran.mechanism,
            network=ran.network,
        ),
    )


def _text_or_none(data: bytes | None) -> str | None:
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def confirm_params(proposal: Asked, root: Path, note: str | None = None) -> messages.ConfirmParams:
    return messages.ConfirmParams(
        toolCallId=proposal.tool_call_id,
        tool=proposal.action.tool,
        arguments=dict(proposal.action.arguments),
        preview=preview_message(proposal, root),
        note=note,
    )


def rule_approved(
    proposal: Asked, decided: RuleDecision, root: Path, run_id: str | None
) -> messages.RuleApproved:
    """A call the person's approval rule approved: what its question would have shown, and
    the rule (its text, place and words) with the digest of the set in force."""
    rule, index, digest = decided.rule, decided.index, decided.rules_sha256
    assert rule is not None and index is not None and digest is not None  # an `allow` has them
    return messages.RuleApproved(
        runId=run_id,
        approved=confirm_params(proposal, root),
        rule=rule.text,
        ruleIndex=index,
        ruleWords=rule.describe(),
        rulesSha256=digest,
    )


def approval_of(answer: Any) -> Approval:
    """The confirm answer as the core's Approval: a reason with a No, a text with a Yes."""
    if not isinstance(answer, dict):
        return Approval(False)
    if answer.get("approved") is True:
        return Approval(True, None, answer.get("text"))
    return Approval(
        False, clean_reason(answer.get("reason")), repropose=answer.get("repropose") is True
    )
