"""Every MCP call through the gate: one action, shown with its exact arguments, approved (or
not asked, saying so, for a tool the person marked read-only), made, and receipted in the same
chain with the server's identity, the definition's digest, the result's digest and a preview."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.mcp_servers import Person, stdio_server, toolbox
from tests.support.workspaces import log_path, make_workspace

from counterfoil import ToolAction, Workspace
from counterfoil.context.prompt import build_system_prompt
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.mcp.toolbox import McpToolbox
from counterfoil.proposals import McpProposal
from counterfoil.receipts.content import load_object
from counterfoil.receipts.own_folder import own_folder
from counterfoil.receipts.verify import verify_receipt_log
from counterfoil.verdict import compute_verdict


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpToolbox]:
    """One server for the module: its folder holds notes.txt; `fetch` is marked read-only."""
    folder = tmp_path_factory.mktemp("served")
    (folder / "notes.txt").write_text("the notes\n")
    server = stdio_server(folder, read_only=("fetch",))
    box = toolbox((server,), folder, tmp_path_factory.mktemp("config"), Person())
    box.offered()
    yield box
    box.close()


class Asked:
    """The person's answers to calls, and the calls they were shown."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.shown: list[McpProposal] = []

    def __call__(self, proposal: McpProposal) -> bool:
        self.shown.append(proposal)
        return self.answer


def workspace(root: Path, box: McpToolbox, asked: Asked) -> Workspace:
    space = make_workspace(
        root, logged=True, setup=WorkspaceSetup(mcp_toolbox=box, confirm_mcp=asked)
    )
    return space


def call(name: str, **arguments: object) -> ToolAction:
    return ToolAction("mcp_call", {"server": "files", "name": name, "arguments": arguments})


def test_the_call_is_shown_with_its_exact_arguments_and_definition(
    tmp_path: Path, served: McpToolbox
) -> None:
    asked = Asked(True)

    workspace(tmp_path, served, asked).execute_step(call("read", path="notes.txt"))

    [shown] = asked.shown
    assert shown.tool == "read"
    assert shown.arguments == {"path": "notes.txt"}
    assert shown.definition_sha256 == served.find("files", "read").definition.sha256


def test_an_approved_call_returns_the_result_and_a_receipt_in_the_chain(
    tmp_path: Path, served: McpToolbox
) -> None:
    space = workspace(tmp_path, served, Asked(True))

    step = space.execute_step(call("read", path="notes.txt"))

    assert step.state == "approved"
    assert "the notes" in step.observation
    receipt = space.receipt_store.get(step.call_id)
    assert receipt is not None
    facts = receipt.evidence.mcp
    assert facts.server["name"] == "files"
    assert facts.server["transport"] == "stdio"
    assert facts.definition_sha256 == served.find("files", "read").definition.sha256
    assert receipt.arguments == {
        "server": "files",
        "name": "read",
        "arguments": {"path": "notes.txt"},
    }
    assert receipt.result == "the notes\n"
    assert verify_receipt_log(log_path(tmp_path)).ok


def test_the_whole_result_is_kept_under_its_digest(tmp_path: Path, served: McpToolbox) -> None:
    space = workspace(tmp_path, served, Asked(True))

    step = space.execute_step(call("read", path="notes.txt"))

    facts = space.receipt_store.get(step.call_id).evidence.mcp
    kept = load_object(own_folder(log_path(tmp_path)), facts.result_sha256)
    assert kept is not None
    assert json.loads(kept)["content"][0]["text"] == "the notes\n"


def test_the_receipt_names_who_approved_and_the_model(tmp_path: Path, served: McpToolbox) -> None:
    space = workspace(tmp_path, served, Asked(True))
    space.record_model({"name": "test-model"})

    step = space.execute_step(call("read", path="notes.txt"))

    approval = space.receipt_store.get(step.call_id).evidence.approval
    assert approval.decision == "approved"
    assert approval.via == "cli"
    assert approval.model.as_record() == {"name": "test-model"}


def test_a_no_is_a_rejection_with_no_call_and_no_receipt(
    tmp_path: Path, served: McpToolbox
) -> None:
    space = workspace(tmp_path, served, Asked(False))

    step = space.execute_step(call("read", path="notes.txt"))

    assert step.state == "rejected"
    assert step.receipt_id is None
    assert len(space.receipt_store) == 0


def test_a_tool_marked_read_only_by_the_person_is_not_asked_and_says_so(
    tmp_path: Path, served: McpToolbox
) -> None:
    asked = Asked(False)
    space = workspace(tmp_path, served, asked)

    step = space.execute_step(call("fetch", text="https://example.org"))

    assert asked.shown == []
    assert step.state == "approved"
    assert "not asked: you marked this tool read-only" in step.observation
    approval = space.receipt_store.get(step.call_id).evidence.approval
    assert approval.via == "readOnlyTools"
    assert approval.asked is False


def test_a_tool_not_offered_is_refused_before_asking(tmp_path: Path, served: McpToolbox) -> None:
    asked = Asked(True)

    step = workspace(tmp_path, served, asked).execute_step(
        ToolAction("mcp_call", {"server": "files", "name": "delete_all", "arguments": {}})
    )

    assert step.state == "refused"
    assert step.error == "MCP tool files/delete_all is not offered to this run"
    assert asked.shown == []


def test_calls_count_in_the_verdict_like_other_effects(tmp_path: Path, served: McpToolbox) -> None:
    space = workspace(tmp_path, served, Asked(False))
    space.execute_step(call("read", path="notes.txt"))

    verdict = compute_verdict(space.effect_outcomes)

    assert verdict.rejected != ()
    assert verdict.succeeded is False


def test_the_prompt_lists_each_offered_tool_with_its_server_and_schema(
    tmp_path: Path, served: McpToolbox
) -> None:
    prompt = build_system_prompt(workspace(tmp_path, served, Asked(True)))

    listed = [json.loads(line) for line in prompt.splitlines() if line.startswith('{"server"')]
    read = next(item for item in listed if item["name"] == "read")
    assert read == {
        "server": "files",
        "name": "read",
        "description": "Read a file of the folder.",
        "input_schema": served.find("files", "read").definition.input_schema,
    }


def test_mcp_call_is_off_without_servers(tmp_path: Path) -> None:
    assert "mcp_call" not in make_workspace(tmp_path).available_tools
