"""The JSON shapes of the daemon protocol, and the checks on what a client sends.

Everything here is plain data in, plain data out, so the shapes the extension relies on are
written down once and tested without a running server. See docs/protocol.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams, JsonRpcServerError

from ..actions import Action, FinalAction, ToolAction
from ..loop import AgentEvent, AgentRun
from ..proposals import ToolProposal
from ..receipts import EffectReceipt
from ..verdict import EffectOutcome, RunVerdict

MAX_GOAL_CHARS = 20_000
MAX_ARGV_ITEMS = 256
MAX_ARGV_ITEM_CHARS = 4096

RUN_IN_PROGRESS = -32001
NO_WORKSPACE = -32002

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class RunInProgress(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("a Counterfoil run is already in progress", RUN_IN_PROGRESS)


class NoWorkspace(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("no workspace folder is open", NO_WORKSPACE)


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


def argv_param(params: Any) -> list[str]:
    argv = _object(params, "counterfoil/runValidation").get("argv")
    if (
        not isinstance(argv, list)
        or not argv
        or len(argv) > MAX_ARGV_ITEMS
        or not all(
            isinstance(part, str) and part and len(part) <= MAX_ARGV_ITEM_CHARS for part in argv
        )
    ):
        raise invalid_params("counterfoil/runValidation needs argv: a non-empty array of strings")
    return list(argv)


def call_id_param(params: Any, method: str) -> str:
    call_id = _object(params, method).get("toolCallId")
    if not isinstance(call_id, str) or not call_id or len(call_id) > MAX_ARGV_ITEM_CHARS:
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


# The confirm request


def _units(text: str, encoding: str) -> int:
    """Length of `text` in the negotiated position encoding's code units."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def end_position(text: str, encoding: str = "utf-16") -> dict[str, int]:
    """The position just past the last character, as LSP counts lines and characters."""
    lines = _LINE_BREAK.split(text)
    return {"line": len(lines) - 1, "character": _units(lines[-1], encoding)}


def workspace_edit(
    uri: str, base_text: str | None, proposed_text: str, encoding: str
) -> dict[str, Any]:
    """The `workspace/applyEdit` shape of replacing a whole file (or creating it)."""
    start = {"line": 0, "character": 0}
    end = start if base_text is None else end_position(base_text, encoding)
    text_edit = {
        "textDocument": {"uri": uri, "version": None},
        "edits": [{"range": {"start": start, "end": end}, "newText": proposed_text}],
    }
    changes: list[dict[str, Any]] = []
    if base_text is None:
        changes.append(
            {"kind": "create", "uri": uri, "options": {"overwrite": False, "ignoreIfExists": False}}
        )
    changes.append(text_edit)
    return {"documentChanges": changes}


def preview(proposal: ToolProposal, root: Path, encoding: str = "utf-16") -> dict[str, Any]:
    if proposal.kind == "command":
        return {
            "kind": "command",
            "argv": list(proposal.argv or ()),
            "cwd": proposal.cwd,
            "timeoutSeconds": proposal.timeout_seconds,
        }
    assert proposal.path is not None
    uri = (root / proposal.path).as_uri()
    if proposal.proposed_text is None:
        edit: dict[str, Any] = {
            "documentChanges": [
                {"kind": "delete", "uri": uri, "options": {"ignoreIfNotExists": False}}
            ]
        }
    else:
        edit = workspace_edit(uri, proposal.base_text, proposal.proposed_text, encoding)
    shown = {
        "kind": "edit",
        "path": proposal.path,
        "edit": edit,
        "baseSha256": proposal.base_sha256,
        "proposedSha256": proposal.proposed_sha256,
    }
    if proposal.reverts is not None:
        shown["reverts"] = proposal.reverts
    return shown


def confirm_params(proposal: ToolProposal, root: Path, encoding: str = "utf-16") -> dict[str, Any]:
    return {
        "toolCallId": proposal.tool_call_id,
        "tool": proposal.action.tool,
        "arguments": dict(proposal.action.arguments),
        "preview": preview(proposal, root, encoding),
    }


def is_approval(answer: Any) -> bool:
    """Only `{"approved": true}` approves; anything else is a No."""
    return isinstance(answer, dict) and answer.get("approved") is True
