"""Under confine and review a command cannot change what another program later runs unconfined:
`.git`'s config, hooks and info and the editor's settings folders are read-only, and `.git`
cannot be moved away and replaced; with the network off no Unix socket outside the root (the
session bus, ssh-agent, docker.sock) can be reached."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace

PYTHON = sys.executable
needs_bubblewrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="confine on Linux needs bubblewrap (apt-get install bubblewrap)",
)


def project(root: Path, body: str, mode: str = "confine") -> Workspace:
    root.mkdir()
    (root / ".counterfoil").mkdir()
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "info").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text("{}\n")
    (root / "tool.py").write_text(body)
    policy = ToolPolicy(root, allowed_commands=((PYTHON, "tool.py"),), command_sandbox=mode)
    store = ReceiptStore(root / ".counterfoil/receipts.jsonl", signer=None)
    return make_workspace(policy, store=store, answer=True)


def run(space: Workspace) -> str:
    return space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))


def writing(path: str, text: str) -> str:
    return f"open({path!r}, 'a').write({text!r})\n"


@needs_bubblewrap
@pytest.mark.parametrize("mode", ["confine", "review"])
@pytest.mark.parametrize(
    ("path", "text"),
    [
        (".git/config", "[core]\n\tfsmonitor = ./evil.sh\n"),
        (".git/hooks/pre-commit", "#!/bin/sh\n"),
        (".git/info/attributes", "* filter=evil\n"),
        (".vscode/settings.json", '{"counterfoil.serverCommand": ["./evil.sh"]}'),
    ],
)
def test_a_sandboxed_command_cannot_change_what_git_or_the_editor_runs(
    tmp_path: Path, mode: str, path: str, text: str
) -> None:
    root = tmp_path / "p"
    space = project(root, writing(path, text), mode)
    before = {name: (root / name).read_bytes() for name in (".git/config", ".vscode/settings.json")}

    observation = run(space)

    assert observation.startswith("status: 1") and "Read-only file system" in observation
    assert {name: (root / name).read_bytes() for name in before} == before
    assert not (root / ".git/hooks/pre-commit").exists()


@needs_bubblewrap
def test_a_confined_command_cannot_move_git_away_and_put_another_in_its_place(
    tmp_path: Path,
) -> None:
    body = "import os\nos.rename('.git', 'old-git')\nos.makedirs('.git')\n" + writing(
        ".git/config", "[core]\n\tfsmonitor = ./evil.sh\n"
    )
    root = tmp_path / "p"

    observation = run(project(root, body))

    assert observation.startswith("status: 1") and "Device or resource busy" in observation
    assert (root / ".git/config").read_text() == "[core]\n"


@needs_bubblewrap
def test_a_confined_command_may_still_write_the_rest_of_git(tmp_path: Path) -> None:
    root = tmp_path / "p"

    observation = run(project(root, writing(".git/index", "x")))

    assert observation.startswith("status: 0")
    assert (root / ".git/index").read_text() == "x"


@pytest.fixture
def host_socket() -> Iterator[Path]:
    """A listening Unix socket where the host keeps its own (/run), as a session bus is."""
    if not os.access("/run", os.W_OK):
        pytest.skip("needs a writable /run (run as root, as CI does)")
    folder = Path(tempfile.mkdtemp(prefix="counterfoil-bus-", dir="/run"))
    path = folder / "bus"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    try:
        yield path
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


def connecting(path: Path) -> str:
    return (
        "import socket\n"
        "client = socket.socket(socket.AF_UNIX)\n"
        f"client.connect({str(path)!r})\n"
        "print('connected')\n"
    )


@needs_bubblewrap
def test_with_the_network_off_a_confined_command_cannot_reach_a_host_socket(
    tmp_path: Path, host_socket: Path
) -> None:
    observation = run(project(tmp_path / "p", connecting(host_socket)))

    assert observation.startswith("status: 1") and "connected" not in observation


@needs_bubblewrap
def test_with_the_network_off_a_confined_command_cannot_reach_the_ssh_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="counterfoil-agent-", dir=sys.prefix))
    agent = folder / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(agent))
    server.listen()
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    try:
        observation = run(project(tmp_path / "p", connecting(agent)))
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)

    assert observation.startswith("status: 1") and "connected" not in observation
