"""A receipt's approval says where the grant that allowed the effect came from."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, Workspace
from counterfoil.evals.package import load_package
from counterfoil.evals.runner import package_workspace
from counterfoil.settings.folder_grants import FolderGrants
from counterfoil.settings.layers import layered_settings

ARGV = [sys.executable, "-c", "print('ok')"]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def log_store(root: Path) -> ReceiptStore:
    (root.parent / "log").mkdir(exist_ok=True)
    return ReceiptStore(root.parent / "log" / "receipts.jsonl", signer=None)


def workspace(root: Path, config: Path, folder: dict[str, object]) -> Workspace:
    layered = layered_settings(
        {"layers": {"user": {}, "folder": folder}}, root, FolderGrants(config)
    )
    policy = layered.settings.policy(root, layered.granted_by())
    store = log_store(root)
    return make_workspace(policy, store=store, answer=True)


def last_grant(space: Workspace) -> object:
    receipt = space.receipt_store.receipts()[-1]
    return receipt.evidence.approval.grant


def test_an_edit_under_a_confirmed_folder_grant_says_so(tmp_path: Path) -> None:
    root, config = tmp_path / "root", tmp_path / "config"
    root.mkdir()
    FolderGrants(config).confirm(root, "allowWrites", True, "person")
    space = workspace(root, config, {"allowWrites": True})

    space.execute(ToolAction("write_file", {"path": "new.txt", "content": "x\n"}))

    assert last_grant(space) == "confirmed-folder"


def test_a_command_the_walkthrough_allowed_says_so(tmp_path: Path) -> None:
    root, config = tmp_path / "root", tmp_path / "config"
    root.mkdir()
    FolderGrants(config).confirm(root, "allowedCommands", (tuple(ARGV),), "walkthrough")
    space = workspace(root, config, {"allowedCommands": [ARGV]})

    space.execute(ToolAction("run_command", {"argv": ARGV}))

    assert last_grant(space) == "walkthrough"


def test_the_persons_own_grant_is_named_as_their_settings(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    store = log_store(root)
    policy = layered_settings({"allowWrites": True}, root).settings.policy(root)
    space = make_workspace(policy, store=store, answer=True)

    space.execute(ToolAction("write_file", {"path": "new.txt", "content": "x\n"}))

    assert last_grant(space) == "settings"


def test_a_task_packages_grants_are_named_as_the_packages(tmp_path: Path) -> None:
    package = load_package(FIXTURES / "evals" / "release-notes")
    root = tmp_path / "root"
    root.mkdir()
    store = log_store(root)

    policy = package_workspace(package, root, store).policy

    assert policy.granted_by.of(None) == "task-package"
    assert {policy.granted_by.of(argv) for argv in package.allowed_commands} == {"task-package"}
