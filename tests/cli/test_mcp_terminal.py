"""MCP on the terminal: the person's `--mcp-servers`, each definition asked about before the
model is offered it, each call asked with its exact arguments, and `receipts show` naming the
server, the definition and the result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.mcp_servers import stdio_server
from tests.support.terminal import run_cli

TOOL_COUNT = 11  # the test server's tools, each asked about once


def agent(project: Path, responses: list[dict[str, object]], answers: str) -> tuple[int, str]:
    script = project.parent / "responses.jsonl"
    script.write_text("".join(json.dumps(item) + "\n" for item in responses))
    server = stdio_server(project)
    entry = {"name": server.name, "command": list(server.command)}
    return run_cli(
        [
            "agent",
            "--root",
            str(project),
            "--model",
            f"scripted:{script}",
            "--mcp-servers",
            json.dumps([entry]),
            "read the notes",
        ],
        answers,
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("the notes\n")
    return folder


CALL = {"tool": "mcp_call", "server": "files", "name": "read", "arguments": {"path": "notes.txt"}}


def test_the_terminal_asks_each_definition_then_the_call_with_its_arguments(
    project: Path,
) -> None:
    status, output = agent(project, [CALL, {"final": "read"}], "y\n" * TOOL_COUNT + "y\n")

    assert output.count("--- MCP tool definition: new ---") == TOOL_COUNT
    assert "[mcp] started: MCP server files" in output
    assert "mcp_call files/read" in output
    assert '"path": "notes.txt"' in output
    assert "the notes" in output
    assert "[mcp] stopped" in output
    assert status == 0


def test_receipts_show_names_the_server_the_definition_and_the_result(project: Path) -> None:
    agent(project, [CALL, {"final": "read"}], "y\n" * TOOL_COUNT + "y\n")

    status, shown = run_cli(["receipts", "show", str(project / ".counterfoil/receipts.jsonl")])

    assert status == 0
    assert "mcp_call" in shown and "files/read" in shown
    assert "mcp server files:" in shown
    assert '  arguments {"path":"notes.txt"}' in shown
    assert "  definition " in shown
