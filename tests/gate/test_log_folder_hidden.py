"""The agent reaches nothing in the log's folder: not other logs, heads or the content store,
and when the log sits in the root, nothing that belongs to a log; more credentials protected."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace


def workspace_with_log(root: Path, log: Path) -> Workspace:
    policy = ToolPolicy(root, allow_writes=True)
    return make_workspace(policy, store=ReceiptStore(log), answer=True)


def read(workspace: Workspace, path: str) -> str:
    return workspace.execute(ToolAction("read_file", {"path": path}))


def test_another_log_in_the_log_folder_is_not_accessible(tmp_path: Path) -> None:
    folder = tmp_path / ".counterfoil"
    folder.mkdir()
    (folder / "cli.jsonl").write_text('{"secret": "another run"}\n')
    (folder / "cli.jsonl.head").write_text("{}\n")
    (folder / "notes.txt").write_text("anything else\n")
    workspace = workspace_with_log(tmp_path, folder / "receipts.jsonl")

    for name in ("cli.jsonl", "cli.jsonl.head", "notes.txt", "NOTES.TXT"):
        assert read(workspace, f".counterfoil/{name}") == "error: path is not accessible"
    assert workspace.execute(ToolAction("list_files", {"path": ".counterfoil"})) == (
        "error: path is not accessible"
    )
    created = workspace.execute(
        ToolAction("write_file", {"path": ".counterfoil/new.md", "content": "x"})
    )
    assert created == "error: path is not accessible"


def test_the_log_folder_is_not_listed_to_the_model(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    workspace = workspace_with_log(tmp_path, tmp_path / ".counterfoil" / "receipts.jsonl")
    (tmp_path / ".counterfoil").mkdir()

    assert workspace.execute(ToolAction("list_files", {})) == "file app.py"


def test_a_log_in_the_root_hides_only_what_belongs_to_logs(tmp_path: Path) -> None:
    (tmp_path / "other.jsonl").write_text("{}\n")
    (tmp_path / "other.jsonl.head").write_text("{}\n")
    (tmp_path / "app.py").write_text("print('hi')\n")
    workspace = workspace_with_log(tmp_path, tmp_path / "receipts.jsonl")

    assert read(workspace, "app.py") == "print('hi')\n"
    for name in ("other.jsonl", "other.jsonl.head", "objects/x"):
        assert read(workspace, name) == "error: path is not accessible"
    assert workspace.list_files(".") == "file app.py"


@pytest.mark.parametrize(
    "path", ["credentials.json", ".config/gh/hosts.yml", ".cargo/credentials.toml"]
)
def test_more_credential_files_are_protected(tmp_path: Path, path: str) -> None:
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("token = secret\n")
    workspace = workspace_with_log(tmp_path, tmp_path / ".counterfoil" / "receipts.jsonl")

    assert read(workspace, path) == "error: path is not accessible"
