"""An MCP call is named by `server/tool` wherever a run's effects are listed: its outcome, the
verdict's lines and the progress note the model reads (not `mcp_call None`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.mcp_servers import Person, stdio_server, toolbox
from tests.support.workspaces import make_workspace

from counterfoil import ToolAction, Workspace
from counterfoil.cli.terminal import format_verdict
from counterfoil.final_check import done_line
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.mcp.toolbox import McpToolbox
from counterfoil.verdict import EffectOutcome, compute_verdict


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpToolbox]:
    folder = tmp_path_factory.mktemp("served")
    (folder / "notes.txt").write_text("the notes\n")
    box = toolbox((stdio_server(folder),), folder, tmp_path_factory.mktemp("config"), Person())
    box.offered()
    yield box
    box.close()


def workspace(root: Path, box: McpToolbox, answer: bool) -> Workspace:
    setup = WorkspaceSetup(mcp_toolbox=box, confirm_mcp=lambda proposal: answer)
    space = make_workspace(root, logged=True, setup=setup)
    return space


def read_call() -> ToolAction:
    return ToolAction(
        "mcp_call", {"server": "files", "name": "read", "arguments": {"path": "notes.txt"}}
    )


@pytest.mark.parametrize("answer", [True, False])
def test_an_mcp_calls_outcome_names_its_server_and_tool(
    answer: bool, tmp_path: Path, served: McpToolbox
) -> None:
    space = workspace(tmp_path, served, answer)

    space.execute_step(read_call())

    [outcome] = space.effect_outcomes
    assert (outcome.state, outcome.mcp_tool) == (
        "approved" if answer else "rejected",
        "files/read",
    )


def test_the_verdict_line_of_an_mcp_call_ends_with_server_and_tool() -> None:
    outcome = EffectOutcome("call-1", "mcp_call", "approved", mcp_tool="files/read")

    shown = format_verdict(compute_verdict([outcome]), reason="done", final="ok", status=0)

    assert "  approved call-1 mcp_call files/read\n" in shown


def test_the_progress_note_names_an_mcp_call_by_server_and_tool() -> None:
    outcome = EffectOutcome("call-1", "mcp_call", "approved", mcp_tool="files/read")

    assert done_line(outcome) == "called files/read"
