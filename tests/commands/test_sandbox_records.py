"""Counterfoil's own records stay out of a command's reach: under confine the whole log folder
is read-only and cannot be moved away, the signing key's folder and $HOME are hidden; in every
mode the gate appends only to the log folder and log it opened."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace

PYTHON = sys.executable
LOG = ".counterfoil/receipts.jsonl"
needs_bubblewrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="confine on Linux needs bubblewrap (apt-get install bubblewrap)",
)
MOVE_THE_LOG_FOLDER_AWAY = (
    "import os, pathlib\n"
    "os.rename('.counterfoil', 'moved-away')\n"
    "pathlib.Path('.counterfoil').mkdir()\n"
    "pathlib.Path('.counterfoil/receipts.jsonl').write_text('')\n"
    "print('the log folder was replaced')\n"
)


def project(root: Path, body: str, mode: str = "confine", **options: Any) -> Workspace:
    root.mkdir(exist_ok=True)
    (root / ".counterfoil").mkdir(exist_ok=True)
    (root / "tool.py").write_text(body)
    policy = ToolPolicy(
        root, allowed_commands=((PYTHON, "tool.py"),), command_sandbox=mode, **options
    )
    store = ReceiptStore(root / LOG, signer=None)
    return make_workspace(policy, store=store, answer=True)


def run(space: Workspace) -> str:
    return space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the root, /tmp and $HOME (which confine replaces)."""
    folder = Path(tempfile.mkdtemp(prefix="counterfoil-outside-", dir=sys.prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@needs_bubblewrap
def test_a_confined_command_cannot_move_the_log_folder_away(tmp_path: Path) -> None:
    space = project(tmp_path / "p", MOVE_THE_LOG_FOLDER_AWAY)

    observation = run(space)

    assert observation.startswith("status: 1")
    assert "the log folder was replaced" not in observation
    assert not (tmp_path / "p" / "moved-away").exists()
    assert len((tmp_path / "p" / LOG).read_text().splitlines()) == 1


@needs_bubblewrap
@pytest.mark.parametrize("planted", ["sessions/run-1/intent.json", "anything-new.txt"])
def test_a_confined_command_cannot_write_anywhere_in_the_log_folder(
    tmp_path: Path, planted: str
) -> None:
    body = (
        "import pathlib\n"
        f"target = pathlib.Path('.counterfoil', {planted!r})\n"
        "target.parent.mkdir(parents=True, exist_ok=True)\n"
        "target.write_text('planted')\n"
    )
    space = project(tmp_path / "p", body)

    assert run(space).startswith("status: 1")
    assert not (tmp_path / "p" / ".counterfoil" / planted).exists()


def test_the_gate_refuses_a_log_folder_replaced_on_the_runs_first_command(
    tmp_path: Path,
) -> None:
    space = project(tmp_path / "p", MOVE_THE_LOG_FOLDER_AWAY, mode="off")

    observation = run(space)

    assert "not the one this process opened" in observation
    assert (tmp_path / "p" / LOG).read_text() == ""


def test_the_store_refuses_a_log_replaced_by_another_file(tmp_path: Path) -> None:
    log = tmp_path / LOG
    log.parent.mkdir()
    log.write_text("")
    store = ReceiptStore(log, signer=None)
    store.reserve_call_id()
    log.rename(tmp_path / "old.jsonl")
    log.write_text("")

    with pytest.raises(Exception, match=r"receipt log .* is not the one this process opened"):
        store.reserve_call_id()


@needs_bubblewrap
def test_a_confined_command_cannot_read_the_signing_key_folder(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (outside / "signing-key").write_text("PRIVATE-KEY-BYTES")
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(outside))
    body = f"import os\nprint(os.listdir({str(outside)!r}))\nprint(open({str(outside / 'signing-key')!r}).read())\n"

    observation = run(project(tmp_path / "p", body))

    assert "PRIVATE-KEY-BYTES" not in observation and "signing-key" not in observation


@needs_bubblewrap
def test_a_confined_command_gets_an_empty_home(tmp_path: Path) -> None:
    secret = Path.home() / f".counterfoil-test-{time.time_ns()}" / "credentials"
    secret.parent.mkdir()
    secret.write_text("HOME-SECRET")
    body = "import os\nprint(sorted(os.listdir(os.path.expanduser('~'))))\n"
    body += f"print(open({str(secret)!r}).read())\n"
    try:
        observation = run(project(tmp_path / "p", body))
    finally:
        shutil.rmtree(secret.parent)

    listing = observation.splitlines()[2]
    assert observation.startswith("status: 1") and "HOME-SECRET" not in observation
    assert listing.startswith("[") and secret.parent.name not in listing


def test_the_root_inside_home_stays_visible_to_a_confined_command(tmp_path: Path) -> None:
    from counterfoil.commands.tree.reach import Reach
    from counterfoil.commands.tree.sandbox import bubblewrap_argv

    home, root = tmp_path / "home", tmp_path / "home" / "project"
    root.mkdir(parents=True)
    argv = bubblewrap_argv("bwrap", root, Reach(hidden=(home,)), network=False)

    assert argv[argv.index(str(home)) - 1] == "--tmpfs"
    assert argv.index(str(home)) < argv.index(str(root))


def test_the_macos_profile_hides_home_and_shows_the_toolchains_and_the_root_again() -> None:
    from counterfoil.commands.tree.reach import Reach
    from counterfoil.commands.tree.sandbox import seatbelt_profile

    reach = Reach(
        hidden=(Path("/Users/a"),),
        shown=(Path("/Users/a/.pyenv"),),
        read_only=(Path("/Users/a/project/.counterfoil"),),
    )
    profile = seatbelt_profile((Path("/Users/a/project"),), reach)

    hide = profile.index('(deny file-read-data\n    (subpath "/Users/a"))')
    show = profile.index(
        '(allow file-read-data\n    (subpath "/Users/a/.pyenv")\n    (subpath "/Users/a/project"))'
    )
    assert hide < show < profile.index('(deny file-write*\n    (subpath "/Users/a/project/.co')


def test_the_macos_profile_keeps_git_from_being_moved_away() -> None:
    from counterfoil.commands.tree.reach import Reach
    from counterfoil.commands.tree.sandbox import seatbelt_profile

    profile = seatbelt_profile((Path("/p"),), Reach(pinned=(Path("/p/.git"),)))

    assert '(deny file-write*\n    (literal "/p/.git"))\n' in profile
