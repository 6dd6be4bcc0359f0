"""`ToolPolicy.hidden_paths`: what a confined command can neither read nor write (an
evaluation's package and receipt log), even where the log would be bound read-only."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy
from counterfoil.commands.tree.reach import Reach
from counterfoil.commands.tree.sandbox import seatbelt_profile

PYTHON = sys.executable
needs_bubblewrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="confine on Linux needs bubblewrap (apt-get install bubblewrap)",
)
# Run from the root: list each hidden folder, try to read and write in it, print what happened.
PROBE = """
import os, sys
for folder in sys.argv[1:]:
    try:
        print(folder, "holds", sorted(os.listdir(folder)))
    except OSError as error:
        print(folder, "unlisted", type(error).__name__)
    try:
        open(os.path.join(folder, "planted.txt"), "w").write("x")
        print(folder, "written")
    except OSError as error:
        print(folder, "unwritable", type(error).__name__)
"""


def _run_probe(root: Path, hidden: tuple[Path, ...], log: Path) -> str:
    (root / "probe.py").write_text(PROBE)
    log.parent.mkdir(exist_ok=True)
    argv = (PYTHON, "probe.py", *map(str, hidden))
    policy = ToolPolicy(
        root, allowed_commands=(argv,), command_sandbox="confine", hidden_paths=hidden
    )
    space = make_workspace(policy, store=ReceiptStore(log, signer=None), answer=True)
    return space.execute(ToolAction("run_command", {"argv": list(argv)}))


@needs_bubblewrap
def test_a_hidden_folder_is_empty_and_read_only_to_a_confined_command(tmp_path: Path) -> None:
    """Empty where the folder above it is shown; absent where the sandbox shows nothing of it
    (a checkout in the home folder, which a confined command does not see)."""
    package = Path(__file__).resolve().parents[2] / "fixtures" / "evals" / "release-notes"
    root = tmp_path / "root"
    root.mkdir()

    observation = _run_probe(root, (package,), tmp_path / "receipts" / "receipts.jsonl")

    assert (
        f"{package} holds []" in observation
        or f"{package} unlisted FileNotFoundError" in observation
    )
    assert f"{package} unwritable" in observation
    assert (package / "held_out_tests" / "checks.json").is_file()
    assert not (package / "planted.txt").exists()


@needs_bubblewrap
def test_a_receipt_log_in_a_hidden_folder_is_not_bound_back_read_only(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    logs = tmp_path / "receipts"

    observation = _run_probe(root, (logs,), logs / "receipts.jsonl")

    assert f"{logs.resolve()} holds []" in observation
    assert (logs / "receipts.jsonl").is_file()


@needs_bubblewrap
def test_a_hidden_folder_that_holds_the_root_still_shows_the_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    root = outer / "root"
    root.mkdir(parents=True)
    (outer / "secret.txt").write_text("hidden\n")

    observation = _run_probe(root, (outer,), tmp_path / "receipts" / "receipts.jsonl")

    assert f"{outer.resolve()} holds ['root']" in observation
    assert observation.startswith("status: 0")


def test_sandbox_exec_denies_reading_and_writing_a_hidden_folder() -> None:
    profile = seatbelt_profile((Path("/work/root"),), Reach(hidden=(Path("/work/package"),)))

    assert '(deny file-read-data\n    (subpath "/work/package"))' in profile
    assert "(deny file-write*)" in profile  # and it is not among the writable folders
    assert "/work/package" not in profile.split("(allow file-read-data")[-1]
