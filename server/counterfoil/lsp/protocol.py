"""The JSON shapes of the daemon protocol, and the checks on what a client sends.

Everything here is plain data in, plain data out, so the shapes the extension relies on are
written down once and tested without a running server. See docs/protocol.md.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams, JsonRpcServerError

from .. import tools
from ..actions import Action, FinalAction, ToolAction
from ..gate.approval import Approval, clean_reason
from ..gate.proposals import ChangeSetProposal, CommandProposal, ToolProposal
from ..receipts.content import DIGEST
from ..steps import StepResult
from ..tools import example_action
from ..verdict import EffectOutcome, RunVerdict
from . import messages
from .edit_preview import workspace_edit
from .messages import wire

if TYPE_CHECKING:
    from ..loop import AgentEvent, AgentRun
    from ..receipts import EffectReceipt

MAX_GOAL_CHARS = 20_000

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


def invalid_params(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=message)


# Requests from the client


def _object(params: Any, method: str) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_params(f"{method} params must be an object")
    return params


def no_params(params: Any, method: str) -> None:
    """Methods that take `{}` (or nothing); extra keys are ignored like unknown settings."""
    _object(params, method)


def goal_param(params: Any) -> str:
    goal = _object(params, "counterfoil/run").get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise invalid_params("counterfoil/run needs a non-empty string goal")
    if len(goal) > MAX_GOAL_CHARS:
        raise invalid_params(f"goal must be at most {MAX_GOAL_CHARS} characters")
    return goal


def text_param(params: Any) -> str:
    text = _object(params, "counterfoil/followUp").get("text")
    if not isinstance(text, str) or not text.strip():
        raise invalid_params("counterfoil/followUp needs a non-empty string text")
    if len(text) > MAX_GOAL_CHARS:
        raise invalid_params(f"text must be at most {MAX_GOAL_CHARS} characters")
    return text


def digest_param(params: Any) -> str:
    digest = _object(params, "counterfoil/object").get("sha256")
    if not isinstance(digest, str) or not DIGEST.fullmatch(digest):
        raise invalid_params("counterfoil/object needs sha256: 64 lower-case hex characters")
    return digest


def argv_param(params: Any) -> list[str]:
    argv = _object(params, "counterfoil/runValidation").get("argv")
    if not isinstance(argv, list) or not tools.is_argv(
        argv, max_items=tools.MAX_ARGV_ITEMS, max_item_chars=tools.MAX_ARGV_ITEM_CHARS
    ):
        raise invalid_params("counterfoil/runValidation needs argv: a non-empty array of strings")
    return list(argv)


def run_id_param(params: Any, method: str) -> str:
    run_id = _object(params, method).get("runId")
    if not isinstance(run_id, str) or not run_id or len(run_id) > 128:
        raise invalid_params(f"{method} needs a non-empty string runId")
    return run_id


def steer_param(params: Any) -> str | None:
    """`counterfoil/resume`'s optional steering message: absent, or a non-empty string."""
    steer = _object(params, "counterfoil/resume").get("steer")
    if steer is None:
        return None
    if not isinstance(steer, str) or not steer.strip():
        raise invalid_params("counterfoil/resume steer must be a non-empty string")
    if len(steer) > MAX_GOAL_CHARS:
        raise invalid_params(f"steer must be at most {MAX_GOAL_CHARS} characters")
    return steer


def call_id_param(params: Any, method: str) -> str:
    call_id = _object(params, method).get("toolCallId")
    if not isinstance(call_id, str) or not call_id or len(call_id) > tools.MAX_ARGV_ITEM_CHARS:
        raise invalid_params(f"{method} needs a non-empty string toolCallId")
    return call_id


def string_param(params: Any, method: str, name: str) -> str:
    value = _object(params, method).get(name)
    if not isinstance(value, str) or not value.strip() or len(value) > tools.MAX_ARGV_ITEM_CHARS:
        raise invalid_params(f"{method} needs a non-empty string {name}")
    return value


# Results and notifications: built from `messages`, turned into JSON data by `wire`


def receipt_dict(receipt: EffectReceipt) -> dict[str, Any]:
    return receipt.to_dict()


def action_message(action: Action | None) -> messages.ToolCall | messages.FinalAnswer | None:
    if isinstance(action, FinalAction):
        return messages.FinalAnswer(final=action.final)
    if isinstance(action, ToolAction):
        return messages.ToolCall(tool=action.tool, arguments=dict(action.arguments))
    return None


def action_dict(action: Action | None) -> dict[str, Any] | None:
    shown: dict[str, Any] | None = wire(action_message(action))
    return shown


def event_dict(
    event: AgentEvent,
    run_id: str | None,
    model_note: str | None = None,
    protected_by: str | None = None,
    enabled_by: str | None = None,
) -> dict[str, Any]:
    """A step as the run panel renders it: the loop's event and the workspace's record of it,
    keyed by run id and call id."""
    shown: dict[str, Any] = wire(
        messages.AgentEvent(
            step=event.step,
            response=event.response,
            action=action_message(event.action),
            result=event.result,
            runId=run_id,
            modelNote=model_note,
            protectedBy=protected_by,
            enabledBy=enabled_by,
            **step_fields(event.step_result),
        )
    )
    return shown


def step_fields(step: StepResult | None) -> dict[str, Any]:
    """What became of a step's call: its state, its receipt and the bytes that receipt keeps,
    and what the effect wrote or ran (`effect`, as in the verdict)."""
    record = messages.StepRecord(
        toolCallId=None if step is None else step.call_id,
        state=None if step is None else step.state,
        receiptId=None if step is None else step.receipt_id,
        outputSha256=None if step is None else step.output_sha256,
        resultSha256=None if step is None else step.result_sha256,
        reason=None if step is None else step.reason,
        effect=None if step is None or step.effect is None else effect_message(step.effect),
    )
    return {item.name: getattr(record, item.name) for item in dataclasses.fields(record)}


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
    )


def outcome_dict(outcome: EffectOutcome) -> dict[str, Any]:
    shown: dict[str, Any] = wire(effect_message(outcome))
    return shown


def verdict_message(verdict: RunVerdict, completed: bool) -> messages.Verdict:
    return messages.Verdict(
        succeeded=completed and verdict.succeeded,
        approved=list(verdict.approved),
        rejected=list(verdict.rejected),
        refused=list(verdict.refused),
        failed=list(verdict.failed),
        filesChanged=[
            messages.FileChanged(path=change.path, sha256=change.sha256, toolCallId=change.call_id)
            for change in verdict.files_changed
        ],
        validation=verdict.validation,
        validatedBy=verdict.validated_by,
        effects=[effect_message(outcome) for outcome in verdict.effects],
    )


def verdict_dict(verdict: RunVerdict, completed: bool) -> dict[str, Any]:
    """The run's evidence, computed from its effects; `succeeded` is the CLI's exit 0."""
    shown: dict[str, Any] = wire(verdict_message(verdict, completed))
    return shown


def run_result(run: AgentRun) -> dict[str, Any]:
    shown: dict[str, Any] = wire(
        messages.RunResult(
            completed=run.completed,
            reason=run.reason,
            final=run.final,
            modifiedFiles=list(run.modified_files),
            error=run.error,
            verdict=verdict_message(run.verdict, run.completed),
        )
    )
    return shown


def failed_run(reason: str, error: str | None) -> dict[str, Any]:
    """A run that ended before the agent loop could start (no model, no receipt log)."""
    shown: dict[str, Any] = wire(
        messages.RunResult(
            completed=False,
            reason=reason,
            final=None,
            modifiedFiles=[],
            error=error,
            verdict=verdict_message(RunVerdict(), False),
        )
    )
    return shown


def tool_table(enabled: frozenset[str]) -> list[dict[str, Any]]:
    """The core's tool table as `counterfoil/status` reports it, in the order models see it."""
    shown: list[dict[str, Any]] = wire(
        [
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
    )
    return shown


# The confirm request


def preview(proposal: ToolProposal, root: Path) -> dict[str, Any]:
    """What the person is shown: the exact argv, or the whole proposed file once and the same
    change as a WorkspaceEdit."""
    shown: messages.EditPreview | messages.CommandPreview | messages.ChangeSetPreview
    if isinstance(proposal, ChangeSetProposal):
        shown = _change_set_preview(proposal, root)
    elif isinstance(proposal, CommandProposal):
        shown = messages.CommandPreview(
            argv=list(proposal.argv), cwd=proposal.cwd, timeoutSeconds=proposal.timeout_seconds
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
    data: dict[str, Any] = wire(shown)
    return data


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


def confirm_params(proposal: ToolProposal, root: Path) -> dict[str, Any]:
    return {
        "toolCallId": proposal.tool_call_id,
        "tool": proposal.action.tool,
        "arguments": dict(proposal.action.arguments),
        "preview": preview(proposal, root),
    }


def is_approval(answer: Any) -> bool:
    """Only `{"approved": true}` approves; anything else is a No."""
    return isinstance(answer, dict) and answer.get("approved") is True


def approval_of(answer: Any) -> Approval:
    """The confirm answer as the core's Approval: a reason with a No, a text with a Yes."""
    if not isinstance(answer, dict):
        return Approval(False)
    if answer.get("approved") is True:
        return Approval(True, None, answer.get("text"))
    return Approval(
        False, clean_reason(answer.get("reason")), repropose=answer.get("repropose") is True
    )
