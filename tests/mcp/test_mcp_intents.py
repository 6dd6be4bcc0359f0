"""An approved MCP call's intent is written before the call is sent; an intent left without a
receipt is settled once as interrupted, naming the server, as a command's is."""

from __future__ import annotations

from pathlib import Path

from tests.support.mcp_servers import Person, stdio_server, toolbox
from tests.support.workspaces import log_path, make_workspace

from counterfoil import ReceiptStore, ToolAction
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.proposals import McpProposal
from counterfoil.receipt_fields import ApprovalRecord
from counterfoil.sessions.intents import mcp_intent_of, settle_intents
from counterfoil.sessions.store import SessionStore


def call(name: str) -> ToolAction:
    return ToolAction("mcp_call", {"server": "files", "name": name, "arguments": {}})


def test_the_intent_is_written_before_the_call_and_can_stop_it(tmp_path: Path) -> None:
    box = toolbox((stdio_server(tmp_path),), tmp_path, tmp_path / "config", Person())
    seen: list[str] = []
    refusing = [True]

    def refuse(proposal: McpProposal, approval: ApprovalRecord) -> None:
        if refusing[0]:
            seen.append(proposal.tool)
            raise OSError(28, "No space left on device")

    setup = WorkspaceSetup(mcp_toolbox=box, confirm_mcp=lambda _: True, before_mcp_call=refuse)
    space = make_workspace(tmp_path, logged=True, setup=setup)
    try:
        stopped = space.execute_step(call("crash"))
        refusing[0] = False
        after = space.execute_step(call("fetch"))
    finally:
        box.close()

    assert seen == ["crash"]
    assert stopped.state == "failed"
    assert "No space left on device" in (stopped.error or "")
    assert after.state == "approved"  # the crash was never sent


def test_a_call_left_open_is_settled_as_interrupted_naming_its_server(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    proposal = McpProposal(
        tool_call_id="call-1",
        action=call("read"),
        server={"name": "files", "transport": "stdio", "command": ["srv"]},
        tool="read",
        description="Read.",
        definition_sha256="d" * 64,
        arguments={},
        read_only=False,
    )
    intent = mcp_intent_of(proposal, ApprovalRecord(decision="approved"), "run-1", tmp_path)
    SessionStore(log).write_intent("run-1", "call-1", intent)
    store = ReceiptStore(log, signer=None)

    settled = settle_intents(SessionStore(log), store)

    assert [found.outcome for found in settled] == ["interrupted"]
    receipt = store.get("call-1")
    assert receipt is not None and receipt.exit_state == "error"
    assert receipt.evidence.mcp.server["name"] == "files"
    assert receipt.evidence.recovered == "interrupted"
