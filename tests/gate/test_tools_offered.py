"""Which tools a policy offers, and what a workspace is made with."""

from __future__ import annotations

from pathlib import Path

from tests.gate.gate_doubles import (
    HELLO,
    Operator,
)
from tests.support.workspaces import make_workspace

from counterfoil import (
    ReceiptStore,
    ToolPolicy,
    Workspace,
)


def test_read_only_workspace_offers_only_reads(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    assert workspace.available_tools == frozenset({"list_files", "read_file"})


def test_writes_add_write_and_edit(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, allow_writes=True)
    assert workspace.available_tools == frozenset(
        {"list_files", "read_file", "write_file", "edit_file"}
    )


def test_allowed_commands_add_run_command(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, allowed_commands=(HELLO,))
    assert workspace.available_tools == frozenset({"list_files", "read_file", "run_command"})


def test_writes_and_commands_offer_every_tool(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, allow_writes=True, allowed_commands=(HELLO,))
    assert workspace.available_tools == frozenset(
        {"list_files", "read_file", "write_file", "edit_file", "run_command"}
    )


def test_constructor_keeps_policy_callback_and_store(tmp_path: Path) -> None:
    policy = ToolPolicy(tmp_path)
    operator = Operator()
    store = ReceiptStore()
    workspace = Workspace(policy, operator, store)
    assert (workspace.policy, workspace.confirm_tool, workspace.receipt_store) == (
        policy,
        operator,
        store,
    )


def test_missing_store_means_a_fresh_in_memory_store(tmp_path: Path) -> None:
    first, second = Workspace(ToolPolicy(tmp_path)), Workspace(ToolPolicy(tmp_path))
    assert isinstance(first.receipt_store, ReceiptStore)
    assert first.receipt_store.path is None
    assert first.receipt_store is not second.receipt_store
    assert len(first.receipt_store) == 0
