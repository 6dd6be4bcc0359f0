"""A server's code comes from where the person said, whatever folder is open: its program is
found on the person's PATH less the root's folders, it starts in an empty folder of its own
with no search path into the root, and it starts wherever it lives (a venv in /tmp), its
program and script shown to it read-only. A root that plants a same-named package, a
`node_modules/.bin/pkg` or a program on a relative PATH entry never gets its code run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.mcp_servers import Person, tiny_server, toolbox

from counterfoil.mcp.launch import outside_root, stdio_launch
from counterfoil.mcp.servers import McpServer, parse_servers

DOCS = Path(__file__).resolve().parents[2] / "docs/mcp.md"
FAKE_NPX = """#!{python}
import os, sys
name = [item for item in sys.argv[1:] if not item.startswith("-")][0]
local = os.path.join(os.getcwd(), "node_modules", ".bin", name)  # npx runs a project's own first
if os.path.exists(local):
    os.execv(local, [local])
os.execv(sys.executable, [sys.executable, "-m", name.replace("-", "_")])
"""


def docs_examples() -> list[McpServer]:
    """The stdio servers of docs/mcp.md's settings example."""
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"```json\n(\"counterfoil\.mcpServers\": \[.*?\])\n```", text, re.DOTALL)
    assert block is not None
    servers = parse_servers(json.loads("{" + block.group(1) + "}")["counterfoil.mcpServers"])
    return [server for server in servers if server.command]


def persons_tools(folder: Path) -> Path:
    """The person's own install in a venv under /tmp: `python3`, an `npx` that behaves as npx
    does (a project's `node_modules/.bin` first), and the genuine `some_mcp_server`."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(folder)],
        check=True,
    )
    python = folder / "bin" / "python3"
    npx = folder / "bin" / "npx"
    npx.write_text(FAKE_NPX.format(python=python), encoding="utf-8")
    npx.chmod(0o755)
    [site] = (folder / "lib").glob("python3*/site-packages")
    tiny_server(site / "some_mcp_server" / "__main__.py", "'genuine'")
    return folder / "bin"


def hostile_root(root: Path) -> None:
    """A repository that plants the same names everywhere a careless start would look."""
    planted = "'planted'"
    tiny_server(root / "some_mcp_server" / "__main__.py", planted)
    for name in ("some-mcp-server", "npx", "python3"):
        for folder in (root / "node_modules" / ".bin", root / "bin"):
            program = folder / name
            program.parent.mkdir(parents=True, exist_ok=True)
            tiny_server(program, planted, prelude=f"#!{sys.executable}\n")
            program.chmod(0o755)


@pytest.mark.parametrize("server", docs_examples(), ids=lambda server: server.name)
def test_each_docs_example_runs_the_persons_program_never_the_roots(
    server: McpServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    hostile_root(root)
    persons = persons_tools(tmp_path / "persons")
    path = os.pathsep.join(
        (str(root / "bin"), "node_modules/.bin", ".", str(persons), os.environ["PATH"])
    )
    monkeypatch.setenv("PATH", path)
    monkeypatch.chdir(root)
    box = toolbox((server,), root, tmp_path / "config", Person())
    try:
        offered = [tool.definition.name for tool in box.offered()]
    finally:
        box.close()

    assert offered == ["genuine"]


def test_a_relative_command_is_not_started_and_says_why(tmp_path: Path) -> None:
    person = Person()
    server = McpServer("files", command=("./server.py",))
    box = toolbox((server,), tmp_path, tmp_path / "config", person)

    assert box.offered() == ()
    [event] = person.events
    assert event.sentence == (
        "MCP server files was not started: its command './server.py' is a relative path, "
        "which names another program in each folder; give its absolute path or a name on PATH"
    )


def test_search_paths_keep_only_absolute_folders_outside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "project"
    environment = {
        "PATH": os.pathsep.join((str(root / "bin"), ".", "", "/usr/bin")),
        "PYTHONPATH": os.pathsep.join((str(root), "/opt/lib")),
        "NODE_PATH": str(root / "node_modules"),
        "HOME": str(tmp_path),
    }

    kept = outside_root(environment, root)

    assert kept == {"PATH": "/usr/bin", "PYTHONPATH": "/opt/lib", "HOME": str(tmp_path)}


def test_the_server_starts_in_an_empty_folder_outside_the_root(tmp_path: Path) -> None:
    server = McpServer("files", command=(sys.executable, "-c", "pass"))

    launch = stdio_launch(server, tmp_path)

    chdir = launch.argv[launch.argv.index("--chdir") + 1]
    assert (chdir, launch.environment["PWD"]) == ("/tmp", "/tmp")
    assert str(tmp_path) not in launch.cwd


def test_a_server_started_without_the_network_cannot_make_a_unix_socket(tmp_path: Path) -> None:
    probe = """import socket
try:
    socket.socket(socket.AF_UNIX).close()
    FOUND = "unix_socket_made"
except OSError:
    FOUND = "unix_socket_refused"
"""
    script = tiny_server(tmp_path / "server" / "probe.py", "FOUND", prelude=probe)
    server = McpServer("files", command=(sys.executable, str(script)))
    person = Person()
    box = toolbox((server,), tmp_path / "server", tmp_path / "config", person)
    try:
        offered = [tool.definition.name for tool in box.offered()]
    finally:
        box.close()

    assert offered == ["unix_socket_refused"]
    assert person.events[0].sandbox is not None
    assert person.events[0].sandbox["unix_sockets"] is False


def program_at(path: Path, script: Path, comment: str) -> McpServer:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n# {comment}\nexec {sys.executable} {script}\n")
    path.chmod(0o755)
    return McpServer("files", command=(str(path),), read_only_tools=("genuine",))


def offered_with(server: McpServer, root: Path, pins: Path, person: Person) -> list[str]:
    box = toolbox((server,), root, pins, person)
    try:
        return [tool.definition.name for tool in box.offered()]
    finally:
        box.close()


def test_a_read_only_tool_of_a_server_whose_program_changed_is_asked_again(
    tmp_path: Path,
) -> None:
    script = tiny_server(tmp_path / "persons" / "server.py", "'genuine'")
    program = tmp_path / "persons" / "bin" / "server"
    pins, root = tmp_path / "config", tmp_path / "project"
    root.mkdir()
    offered_with(program_at(program, script, "first"), root, pins, Person())
    again = Person(approve=False)

    offered = offered_with(program_at(program, script, "replaced"), root, pins, again)

    [question] = again.questions
    assert (question.check.state, question.check.changes) == ("changed", ("executable",))
    assert offered == []


def test_a_server_whose_start_fails_says_why_and_what_it_can_read(tmp_path: Path) -> None:
    script = tiny_server(tmp_path / "persons" / "server.py", "'genuine'")
    server = McpServer("files", command=(sys.executable, str(script)))
    person = Person()

    def vanish_then_connect(server: McpServer, launch: Any) -> Any:
        from counterfoil.mcp.connection import connect

        script.unlink()
        script.parent.rmdir()  # shown to the sandbox, now gone: bwrap cannot bind it
        return connect(server, launch)

    box = toolbox((server,), tmp_path / "project", tmp_path / "config", person)
    box._connect = vanish_then_connect
    assert box.offered() == ()

    [event] = person.events
    assert event.state == "not started"
    assert "No such file or directory" in event.sentence
    readable = event.sentence.split("confined, it reads the system's folders, the project and ")
    assert str(script.parent) in readable[1].split(" (not your home folder or /tmp)")[0]
