"""An MCP call's receipt travels in the exported evidence with its server, definition and
result digests."""

from __future__ import annotations

from counterfoil.attestation.statement import effect_entry
from counterfoil.receipt_fields import ApprovalRecord, McpRecord, ReceiptEvidence
from counterfoil.receipts import EffectReceipt

FACTS = {
    "server": {"name": "files", "transport": "stdio", "command": ["srv"]},
    "tool": "read",
    "definition_sha256": "d" * 64,
    "result_sha256": "r" * 64,
}
RECEIPT = EffectReceipt(
    tool_call_id="call-1",
    tool="mcp_call",
    arguments={"server": "files", "name": "read", "arguments": {"path": "a"}},
    exit_state="ok",
    result="text",
    evidence=ReceiptEvidence(
        run_id="run", mcp=McpRecord.from_record(FACTS), approval=ApprovalRecord(decision="approved")
    ),
)


def test_the_exported_entry_keeps_the_calls_server_definition_and_result() -> None:
    assert effect_entry(RECEIPT)["mcp"] == FACTS
