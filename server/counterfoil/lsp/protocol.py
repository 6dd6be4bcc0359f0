"""The JSON shapes of the daemon protocol, and the checks on what a client sends.

Everything here is plain data in, plain data out, so the shapes the extension relies on are
written down once and tested without a running server. See docs/protocol.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams, JsonRpcServerError

from .. import tools
from ..actions import Action, FinalAction, ToolAction
from ..approval import Approval, clean_reason
from ..proposals import ChangeSetProposal, CommandProposal, ToolProposal
from ..receipts.content import DIGEST
from ..tools import example_action
from ..verdict import EffectOutcome, RunVerdict
from .outcomes import step_outcome

if TYPE_CHECKING:
    from ..loop import AgentEvent, AgentRun
    from ..receipts import EffectReceipt

MAX_GOAL_CHARS = 20_000

RUN_IN_PROGRESS = -32001
NO_WORKSPACE = -32002
NO_CONVERSATION = -32003


class RunInProgress(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("a Counterfoil run is already in progress", RUN_IN_PROGRESS)  # type: ignore[no-untyped-call]


class NoWorkspace(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("no workspace folder is open", NO_WORKSPACE)  # type: ignore[no-untyped-call]


class NoConversationToContinue(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("no conversation to continue", NO_CONVERSATION)  # type: ignore[no-untyped-call]


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


def call_id_param(params: Any, method: str) -> str:
    call_id = _object(params, method).get("toolCallId")
    if not isinstance(call_id, str) or not call_id or len(call_id) > tools.MAX_ARGV_ITEM_CHARS:
        raise invalid_params(f"{method} needs a non-empty string toolCallId")
    return call_id


# Results and notifications


def receipt_dict(receipt: EffectReceipt) -> dict[str, Any]:
    return receipt.to_dict()


def action_dict(action: Action | None) -> dict[str, Any] | None:
    if isinstance(action, FinalAction):
        return {"final": action.final}
    if isinstance(action, ToolAction):
        return {"tool": action.tool, "arguments": dict(action.arguments)}
    return None


def event_dict(event: AgentEvent) -> dict[str, Any]:
    return {
        "step": event.step,
        "response": event.response,
        "action": action_dict(event.action),
        "result": event.result,
        "outcome": step_outcome(event.action, event.result),
    }


def outcome_dict(outcome: EffectOutcome) -> dict[str, Any]:
    return {
        "toolCallId": outcome.call_id,
        "tool": outcome.tool,
        "state": outcome.state,
        "path": outcome.path,
        "argv": None if outcome.argv is None else list(outcome.argv),
        "sha256": outcome.sha256,
        "exitStatus": outcome.exit_status,
        "timedOut": outcome.timed_out,
        "reason": outcome.reason,
    }


def verdict_dict(verdict: RunVerdict, completed: bool) -> dict[str, Any]:
    """The run's evidence, computed from its effects; `succeeded` is the CLI's exit 0."""
    return {
        "succeeded": completed and verdict.succeeded,
        "approved": list(verdict.approved),
        "rejected": list(verdict.rejected),
        "refused": list(verdict.refused),
        "failed": list(verdict.failed),
        "filesChanged": [
            {"path": change.path, "sha256": change.sha256, "toolCallId": change.call_id}
            for change in verdict.files_changed
        ],
        "validation": verdict.validation,
        "validatedBy": verdict.validated_by,
        "effects": [outcome_dict(outcome) for outcome in verdict.effects],
    }


def run_result(run: AgentRun) -> dict[str, Any]:
    return {
        "completed": run.completed,
        "reason": run.reason,
        "final": run.final,
        "modifiedFiles": list(run.modified_files),
        "events": [event_dict(event) for event in run.events],
        "error": run.error,
        "verdict": verdict_dict(run.verdict, run.completed),
    }


def failed_run(reason: str, error: str | None) -> dict[str, Any]:
    """A run that ended before the agent loop could start (no model, no receipt log)."""
    return {
        "completed": False,
        "reason": reason,
        "final": None,
        "modifiedFiles": [],
        "events": [],
        "error": error,
        "verdict": verdict_dict(RunVerdict(), False),
    }


def tool_table(enabled: frozenset[str]) -> list[dict[str, Any]]:
    """The core's tool table as `counterfoil/status` reports it, in the order models see it."""
    return [
        {
            "name": tool.name,
            "effect": tool.effect,
            "enabled": tool.name in enabled,
            "arguments": [
                {"name": item.name, "type": item.type, "required": item.required}
                for item in tool.arguments
            ],
            "example": example_action(tool),
        }
        for tool in tools.TOOLS
    ]


# The confirm request


def preview(proposal: ToolProposal, root: Path) -> dict[str, Any]:
    """What the person is shown: the exact argv, or the whole proposed file once."""
    if isinstance(proposal, ChangeSetProposal):
        return {
            "kind": "changes",
            "reverts": proposal.reverts,
            "files": [
                {
                    "path": item.path,
                    "uri": (root / item.path).as_uri(),
                    "expectedSha256": item.expected_sha256,
                    "contentSha256": item.content_sha256,
                    "removesFile": item.content is None,
                    "currentText": _text_or_none(item.current),
                    "proposedText": _text_or_none(item.content),
                }
                for item in proposal.files
            ],
            "leftAlone": [{"path": path, "why": why} for path, why in proposal.left_alone],
        }
    if isinstance(proposal, CommandProposal):
        return {
            "kind": "command",
            "argv": list(proposal.argv),
            "cwd": proposal.cwd,
            "timeoutSeconds": proposal.timeout_seconds,
        }
    shown: dict[str, Any] = {
        "kind": "edit",
        "path": proposal.path,
        "uri": (root / proposal.path).as_uri(),
        "removesFile": proposal.removes_file,
        "baseSha256": proposal.base_sha256,
        "proposedSha256": None if proposal.removes_file else proposal.proposed_sha256,
        "proposedText": None if proposal.removes_file else proposal.proposed_text,
    }
    if proposal.reverts is not None:
        shown["reverts"] = proposal.reverts
    if proposal.new_folders:
        # Created by the write (outermost first), or removed when empty by a revert.
        shown["newFolders"] = list(proposal.new_folders)
    return shown


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
