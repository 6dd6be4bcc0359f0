"""A stdio server runs confined, started on first use and stopped with the run, its start
shown: it reads the project but cannot change it, cannot see the person's home, and gets only
the core environment names plus those its entry passes. A server over streamable HTTP is
reached the same way through the SDK."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests.support.mcp_servers import Person, http_server, stdio_server, toolbox

from counterfoil.mcp.connection import CallReply, McpFailure
from counterfoil.mcp.toolbox import McpToolbox


def reply_text(reply: CallReply) -> str:
    return str(reply.result["content"][0]["text"])


def call(box: McpToolbox, name: str, **arguments: object) -> CallReply:
    tool = box.find("files", name)
    assert tool is not None
    return box.call(tool, dict(arguments))


def test_no_server_starts_before_its_tools_are_first_needed(tmp_path: Path) -> None:
    person = Person()
    box = toolbox((stdio_server(tmp_path),), tmp_path, tmp_path / "config", person)

    assert person.events == []
    box.offered()
    box.close()
    assert [event.state for event in person.events] == ["started", "stopped"]


def test_the_start_is_shown_with_its_sandbox(tmp_path: Path) -> None:
    person = Person()
    box = toolbox((stdio_server(tmp_path),), tmp_path, tmp_path / "config", person)
    box.offered()
    box.close()

    started = person.events[0]
    assert started.sandbox is not None
    assert started.sandbox["mode"] == "confine"
    assert started.sandbox["network"] is False


def test_the_server_cannot_change_the_project(tmp_path: Path) -> None:
    box = toolbox((stdio_server(tmp_path),), tmp_path, tmp_path / "config", Person())
    try:
        reply = call(box, "write", path="planted.py", content="x")
    finally:
        box.close()

    assert reply.is_error
    assert not (tmp_path / "planted.py").exists()


def test_the_server_cannot_see_the_home_folder(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    secret = home / ".counterfoil-mcp-test-secret"
    secret.write_text("s")
    try:
        box = toolbox((stdio_server(tmp_path),), tmp_path, tmp_path / "config", Person())
        try:
            listing = reply_text(call(box, "home"))
        finally:
            box.close()
    finally:
        secret.unlink()

    assert secret.name not in listing.split()


def test_the_server_gets_only_the_core_environment_and_what_its_entry_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://secret")
    monkeypatch.setenv("PASSED_ON", "1")
    server = stdio_server(tmp_path, pass_environment=("PASSED_ON",))
    box = toolbox((server,), tmp_path, tmp_path / "config", Person())
    try:
        names = reply_text(call(box, "env")).split()
    finally:
        box.close()

    assert "PASSED_ON" in names
    assert "DATABASE_URL" not in names


def test_a_server_that_cannot_start_is_one_event_and_no_tools(tmp_path: Path) -> None:
    person = Person()
    server = stdio_server(tmp_path)
    broken = type(server)("files", command=("/nonexistent/server",), timeout_seconds=10)
    box = toolbox((broken,), tmp_path, tmp_path / "config", person)

    assert box.offered() == ()
    box.close()
    [event] = person.events
    assert event.state == "not started"
    assert "\n" not in event.sentence


def test_a_server_over_streamable_http_is_pinned_and_called(tmp_path: Path) -> None:
    (tmp_path / "page.txt").write_text("over http")
    person = Person()
    with http_server(tmp_path) as server:
        box = toolbox((server,), tmp_path, tmp_path / "config", person)
        try:
            tool = box.find("web", "read")
            assert tool is not None
            reply = box.call(tool, {"path": "page.txt"})
        finally:
            box.close()

    assert any(question.definition.name == "read" for question in person.questions)
    assert reply_text(reply) == "over http"


def test_without_the_sdk_a_server_is_not_started_and_the_run_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    person = Person()
    box = toolbox((stdio_server(tmp_path),), tmp_path, tmp_path / "config", person)

    assert box.offered() == ()
    assert person.events[0].sentence == (
        "MCP server files needs the mcp extra: pip install 'counterfoil[mcp]'"
    )


def test_a_server_over_http_that_hangs_is_one_sentence(tmp_path: Path) -> None:
    with http_server(tmp_path) as server:
        slow = type(server)(server.name, url=server.url, timeout_seconds=3.0)
        box = toolbox((slow,), tmp_path, tmp_path / "config", Person())
        try:
            tool = box.find("web", "hang")
            assert tool is not None
            with pytest.raises(McpFailure) as failure:
                box.call(tool, {})
        finally:
            box.close()

    assert str(failure.value) == "MCP server web did not answer the call of hang within 3 s"
