"""`commandSandbox`: confine keeps a command's writes in the root and a private /tmp, with no
network unless allowed; review runs it on a copy whose changes only an Accept applies."""

from __future__ import annotations

import fcntl
import json
import shutil
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.processes import GUARD_SECONDS, finishes
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace
from counterfoil.commands.tree import sandbox
from counterfoil.commands.tree.reach import Reach
from counterfoil.commands.tree.sandbox import sandbox_for, seatbelt_profile
from counterfoil.proposals import ChangeSetProposal, ToolProposal
from counterfoil.settings.table import Settings, SettingsError

PYTHON = sys.executable
LOG = ".counterfoil/receipts.jsonl"
needs_bubblewrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="confine on Linux needs bubblewrap (apt-get install bubblewrap)",
)


def project(
    root: Path,
    body: str,
    mode: str = "confine",
    confirm: Callable[[ToolProposal], object] | None = None,
    **options: Any,
) -> Workspace:
    root.mkdir(exist_ok=True)
    (root / ".counterfoil").mkdir()
    (root / "tool.py").write_text(body)
    policy = ToolPolicy(
        root,
        allowed_commands=((PYTHON, "tool.py"),),
        command_sandbox=mode,
        command_timeout_seconds=options.pop("timeout", 30.0),
        **options,
    )
    store = ReceiptStore(root / LOG, signer=None)
    if confirm is not None:  # who answers, else every proposal is a Yes
        return make_workspace(policy, store=store, confirm_proposal=confirm)
    return make_workspace(policy, store=store, answer=True)


def run(space: Workspace) -> str:
    return space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))


def last_line(root: Path) -> dict[str, Any]:
    line: dict[str, Any] = json.loads((root / LOG).read_text().splitlines()[-1])
    return line


@needs_bubblewrap
def test_a_confined_command_writes_under_the_root(tmp_path: Path) -> None:
    space = project(tmp_path / "p", "open('made.txt', 'w').write('x')\n")

    assert run(space).startswith("status: 0")
    assert (tmp_path / "p" / "made.txt").read_text() == "x"


@needs_bubblewrap
def test_a_confined_command_cannot_write_outside_the_root(tmp_path: Path) -> None:
    outside = Path(sys.prefix) / f"counterfoil-outside-{time.time_ns()}.txt"
    space = project(tmp_path / "p", f"open({str(outside)!r}, 'w').write('x')\n")

    try:
        observation = run(space)
        assert observation.startswith("status: 1")
        assert "Read-only file system" in observation
        assert not outside.exists()
    finally:
        outside.unlink(missing_ok=True)


@needs_bubblewrap
def test_a_confined_command_gets_a_private_tmp(tmp_path: Path) -> None:
    marker = f"/tmp/counterfoil-private-{time.time_ns()}"
    space = project(tmp_path / "p", f"open({marker!r}, 'w').write('x')\n")

    assert run(space).startswith("status: 0")
    assert not Path(marker).exists()


@needs_bubblewrap
def test_a_confined_command_cannot_write_the_receipt_log(tmp_path: Path) -> None:
    body = "open('.counterfoil/receipts.jsonl', 'a').write('forged\\n')\n"
    space = project(tmp_path / "p", body)

    observation = run(space)

    assert observation.startswith("status: 1")
    assert "forged" not in (tmp_path / "p" / LOG).read_text().splitlines()


def listening() -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server, server.getsockname()[1]


CONNECT = "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5)\nprint('ok')\n"


@needs_bubblewrap
def test_a_confined_command_has_no_network(tmp_path: Path) -> None:
    server, port = listening()
    with server:
        observation = run(project(tmp_path / "p", CONNECT.format(port=port)))

    assert observation.startswith("status: 1")
    assert "Connection refused" in observation or "unreachable" in observation


@needs_bubblewrap
def test_allow_network_lets_a_confined_command_connect(tmp_path: Path) -> None:
    server, port = listening()
    with server:
        space = project(tmp_path / "p", CONNECT.format(port=port), allow_network=True)
        observation = run(space)

    assert observation.startswith("status: 0\noutput:\nok")


@needs_bubblewrap
def test_the_receipt_says_how_the_command_ran(tmp_path: Path) -> None:
    run(project(tmp_path / "p", ""))

    assert last_line(tmp_path / "p")["sandbox"] == {
        "mode": "confine",
        "mechanism": "bubblewrap",
        "network": False,
        "unix_sockets": False,
    }


def test_a_command_run_as_the_user_says_so_on_its_receipt(tmp_path: Path) -> None:
    run(project(tmp_path / "p", "", mode="off"))

    assert last_line(tmp_path / "p")["sandbox"] == {
        "mode": "off",
        "mechanism": "none",
        "network": True,
        "unix_sockets": True,
    }


@needs_bubblewrap
def test_nothing_a_confined_command_started_outlives_it(tmp_path: Path) -> None:
    # Its pid is the sandbox's own, so the descendant holds a lock on a file of the root instead:
    # the lock is free once it is gone. Once the test writes `go`, a survivor would write
    # `survived.txt` and let go of the lock.
    body = (
        "import fcntl, os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    held = os.open('held.lock', os.O_RDWR | os.O_CREAT)\n"
        "    fcntl.flock(held, fcntl.LOCK_EX)\n"
        "    open('locked', 'w').close()\n"
        "    while not os.path.exists('go'):\n"
        "        time.sleep(0.01)\n"
        "    open('survived.txt', 'w').close()\n"
        "    os._exit(0)\n"
        "while not os.path.exists('locked'):\n"
        "    time.sleep(0.01)\n"
    )
    root = tmp_path / "p"
    space = project(root, body)

    assert run(space).startswith("status: 0")
    (root / "go").touch()
    assert lock_is_free(root / "held.lock")
    assert not (root / "survived.txt").exists()


def lock_is_free(path: Path) -> bool:
    """True once nothing holds `path`'s lock (its holder is gone), within the guard."""
    with path.open("rb") as file:
        deadline = time.monotonic() + GUARD_SECONDS
        while time.monotonic() < deadline:
            try:
                fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                time.sleep(0.02)
            else:
                return True
    return False


@needs_bubblewrap
def test_a_confined_command_that_runs_too_long_is_ended(tmp_path: Path) -> None:
    space = project(tmp_path / "p", "import time\ntime.sleep(600)\n", timeout=1.0)

    assert finishes(lambda: run(space)).startswith("status: timeout")


def test_confine_without_bubblewrap_is_refused_before_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    asked: list[ToolProposal] = []
    space = project(tmp_path / "p", "open('ran.txt', 'w').close()\n", confirm=asked.append)

    observation = run(space)

    assert observation == (
        "error: commandSandbox confine needs bubblewrap, which is not installed "
        "(install it: sudo apt-get install bubblewrap); the command was not run"
    )
    assert asked == [] and not (tmp_path / "p" / "ran.txt").exists()


def test_confine_where_there_is_no_mechanism_is_refused_in_one_sentence() -> None:
    with pytest.raises(Exception, match=r"^commandSandbox confine is not available on win32"):
        sandbox_for("confine", Path("/"), network=False, platform="win32")


def test_the_macos_profile_allows_writes_only_under_the_root_and_its_temporary_folder() -> None:
    profile = seatbelt_profile((Path("/work/my project"), Path("/private/tmp/t")))

    assert profile.startswith("(version 1)\n(allow default)\n(deny file-write*)\n")
    assert '(allow file-write*\n    (subpath "/work/my project")\n' in profile
    assert '    (subpath "/private/tmp/t")\n' in profile
    assert profile.endswith("(deny network*)\n")


def test_the_macos_profile_keeps_the_receipt_log_read_only_and_may_allow_network() -> None:
    reach = Reach(read_only=(Path('/p/.counterfoil/a"b'),))
    profile = seatbelt_profile((Path("/p"),), reach, network=True)

    assert '(deny file-write*\n    (subpath "/p/.counterfoil/a\\"b"))\n' in profile
    assert "network" not in profile


def test_the_sandbox_setting_takes_its_modes_only() -> None:
    assert Settings.from_mapping({"commandSandbox": "review"}).command_sandbox == "review"
    with pytest.raises(SettingsError, match="commandSandbox must be one of off, confine, review"):
        Settings.from_mapping({"commandSandbox": "on"})


REVIEWED = (
    "import os, pathlib\n"
    "pathlib.Path('data.txt').write_text('after\\n')\n"
    "pathlib.Path('new.txt').write_text('new\\n')\n"
)


def reviewed(root: Path, answer: object) -> tuple[Workspace, list[ToolProposal]]:
    root.mkdir()
    (root / "data.txt").write_text("before\n")
    asked: list[ToolProposal] = []

    def confirm(proposal: ToolProposal) -> object:
        asked.append(proposal)
        return answer(proposal) if callable(answer) else answer

    space = project(root, REVIEWED, mode="review", confirm=confirm)
    return space, asked


@needs_bubblewrap
def test_a_reviewed_command_changes_nothing_until_accepted(tmp_path: Path) -> None:
    root = tmp_path / "p"
    seen: list[str] = []

    def look_then_accept(proposal: ToolProposal) -> bool:
        if isinstance(proposal, ChangeSetProposal):
            seen.append((root / "data.txt").read_text())
            seen.append(str((root / "new.txt").exists()))
        return True

    space, asked = reviewed(root, look_then_accept)

    run(space)

    assert seen == ["before\n", "False"]
    assert isinstance(asked[1], ChangeSetProposal)
    assert [item.path for item in asked[1].files] == ["data.txt", "new.txt"]
    assert (root / "data.txt").read_text() == "after\n"


@needs_bubblewrap
def test_an_accepted_review_applies_the_changes_and_says_so_on_the_receipt(
    tmp_path: Path,
) -> None:
    space, _ = reviewed(tmp_path / "p", True)

    observation = run(space)

    assert (tmp_path / "p" / "new.txt").read_text() == "new\n"
    assert (
        "files changed by the command (2):\n  modified data.txt\n  created new.txt\n" in observation
    )
    assert "[review: accepted; 2 file(s) applied to the root]" in observation
    line = last_line(tmp_path / "p")
    assert line["review"]["applied"] == ["data.txt", "new.txt"]
    assert line["sandbox"]["mode"] == "review"


@needs_bubblewrap
def test_a_rejected_review_discards_the_changes(tmp_path: Path) -> None:
    space, _ = reviewed(
        tmp_path / "p", lambda proposal: not isinstance(proposal, ChangeSetProposal)
    )

    observation = run(space)

    assert (tmp_path / "p" / "data.txt").read_text() == "before\n"
    assert not (tmp_path / "p" / "new.txt").exists()
    assert "[review: rejected; the changes were discarded]" in observation


@needs_bubblewrap
def test_an_accepted_review_applies_nothing_if_the_root_changed_meanwhile(tmp_path: Path) -> None:
    root = tmp_path / "p"

    def edit_then_accept(proposal: ToolProposal) -> bool:
        if isinstance(proposal, ChangeSetProposal):
            (root / "data.txt").write_text("a person's edit\n")
        return True

    space, _ = reviewed(root, edit_then_accept)

    observation = run(space)

    assert "nothing was applied" in observation
    assert (root / "data.txt").read_text() == "a person's edit\n"
    assert not (root / "new.txt").exists()


def test_the_cli_flags_set_the_sandbox_and_the_network() -> None:
    from counterfoil.cli.main import build_parser
    from counterfoil.cli.setting_flags import agent_settings

    args = build_parser().parse_args(
        ["agent", "goal", "--root", ".", "--sandbox", "confine", "--allow-network"]
    )

    settings = agent_settings(args)
    assert (settings.command_sandbox, settings.allow_network) == ("confine", True)
