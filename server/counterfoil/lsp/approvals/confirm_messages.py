"""The `counterfoil/confirm` request's params, what a rule approved without asking, and the
answer as the core's `Approval`: what the person is shown is the exact argv, the exact MCP
call, or the whole proposed file once and the same change as a WorkspaceEdit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ... import protocol as messages
from ...gate.approval import Approval, clean_reason
from ...gate.rules import RuleDecision
from ...proposals import ChangeSetProposal, CommandProposal, McpProposal, ToolProposal
from ...protocol import wire
from .edit_preview import workspace_edit
from .mcp_questions import mcp_call_preview

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
