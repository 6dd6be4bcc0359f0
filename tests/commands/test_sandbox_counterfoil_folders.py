"""Counterfoil's own folders stay out of a command's and the model's reach even when the root
holds them: the root at a temporary `$HOME` with the config folder (installation secret,
receipt-signing key) and the cache inside it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace
from counterfoil.sessions.intent_seal import installation_secret

PYTHON = sys.executable
needs_bubblewrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="confine on Linux needs bubblewrap (apt-get install bubblewrap)",
)
SECRET = ".config/counterfoil/installation-secret"
SIGNING_KEY = ".config/counterfoil/receipt-signing-key.pem"
CACHED = ".cache/counterfoil/digests.json"
OTHER_LOG = ".counterfoil/other.jsonl"  # in the receipt log's folder
# Print each file's bytes, or the error that kept them from the command.
PROBE = """
import sys
for name in sys.argv[1:]:
    try:
        print(name, "read", open(name, "rb").read().hex())
    except OSError as error:
        print(name, "unread", type(error).__name__)
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder that is also the root, holding Counterfoil's config folder and cache."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("COUNTERFOIL_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    installation_secret()
    (home / SIGNING_KEY).write_text("-----BEGIN PRIVATE KEY-----\nsigning-key\n")
    (home / CACHED).parent.mkdir(parents=True)
    (home / CACHED).write_text('{"cached": "digest"}\n')
    (home / "notes.txt").write_text("signing-key is a phrase here too\n")
    (home / OTHER_LOG).parent.mkdir()
    (home / OTHER_LOG).write_text('{"another": "run"}\n')
    return home


def workspace(home: Path, mode: str = "confine", *argv: str) -> Workspace:
    policy = ToolPolicy(
        home,
        allow_writes=True,
        allowed_commands=(argv,) if argv else (),
        command_sandbox=mode,
        allow_search=True,
    )
    store = ReceiptStore(home / ".counterfoil" / "receipts.jsonl", signer=None)
    return make_workspace(policy, store=store, answer=True)


def run_probe(home: Path, mode: str) -> str:
    (home / "probe.py").write_text(PROBE)
    argv = (PYTHON, "probe.py", SECRET, SIGNING_KEY, CACHED, OTHER_LOG, "notes.txt")
    space = workspace(home, mode, *argv)
    return space.execute(ToolAction("run_command", {"argv": list(argv)}))


@needs_bubblewrap
def test_a_confined_command_cannot_read_the_installation_secret_or_signing_key(
    home: Path,
) -> None:
    observation = run_probe(home, "confine")

    assert f"{SECRET} unread" in observation
    assert f"{SIGNING_KEY} unread" in observation
    assert f"{CACHED} unread" in observation
    assert f"{OTHER_LOG} unread" in observation
    assert "notes.txt read" in observation  # the rest of the root is the command's
    assert installation_secret().hex() not in observation


@needs_bubblewrap
def test_a_reviewed_command_cannot_read_the_installation_secret_either(home: Path) -> None:
    observation = run_probe(home, "review")

    assert f"{SECRET} unread" in observation
    assert f"{SIGNING_KEY} unread" in observation
    assert installation_secret().hex() not in observation


def test_the_model_cannot_read_the_config_folder_inside_the_root(home: Path) -> None:
    space = workspace(home)

    for path in (SECRET, ".config/counterfoil/folder-grants.json", CACHED):
        observation = space.execute(ToolAction("read_file", {"path": path}))
        assert observation == "error: path is not accessible", path


def test_the_model_is_not_shown_counterfoils_folders_in_a_listing(home: Path) -> None:
    space = workspace(home)

    assert "counterfoil" not in space.execute(ToolAction("list_files", {"path": ".config"}))
    assert space.execute(ToolAction("list_files", {"path": ".cache"})) == "(empty directory)"


def test_a_search_finds_nothing_in_counterfoils_folders(home: Path) -> None:
    space = workspace(home)

    observation = space.execute(ToolAction("search_files", {"pattern": "signing-key|digest"}))

    assert "notes.txt" in observation
    assert ".config" not in observation
    assert ".cache" not in observation
