"""Counterfoil's folders beside a log are in one folder of its own, named for the log: a log
in the project root (`--receipt-log .agent-receipts.jsonl`) leaves the project's `objects/`
and `sessions/` to the project."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, Workspace
from counterfoil.receipts.retention import collect_garbage
from counterfoil.sessions.store import SessionStore

EDIT = ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"})


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))
    root = tmp_path / "project"
    (root / "objects").mkdir(parents=True)
    (root / "objects" / "model.txt").write_text("the project's own objects\n")
    (root / "sessions").write_text("the project's sessions file\n")
    (root / "app.py").write_text("answer = 1\n")
    return root


def gate(root: Path) -> Workspace:
    return make_workspace(
        root,
        store=ReceiptStore(root / ".agent-receipts.jsonl", signer=None),
        answer=True,
        run_id="run-1",
        allow_writes=True,
    )


def test_the_projects_objects_and_sessions_stay_readable_by_the_model(project: Path) -> None:
    workspace = gate(project)

    assert workspace.execute(ToolAction("read_file", {"path": "objects/model.txt"})).endswith(
        "the project's own objects\n"
    )
    assert "the project's sessions file" in workspace.execute(
        ToolAction("read_file", {"path": "sessions"})
    )


def test_counterfoil_writes_its_objects_into_its_own_folder_named_for_the_log(
    project: Path,
) -> None:
    workspace = gate(project)
    workspace.read_file("app.py")

    assert workspace.execute(EDIT).startswith("edited app.py")

    own = project / ".agent-receipts.jsonl.counterfoil"
    assert sorted(path.name for path in (project / "objects").iterdir()) == ["model.txt"]
    assert len(list((own / "objects").iterdir())) == 2  # the bytes before and after
    assert workspace.execute(ToolAction("list_files", {"path": "."})).count("counterfoil") == 0


def test_a_project_sessions_file_does_not_block_a_run(project: Path) -> None:
    sessions = SessionStore(project / ".agent-receipts.jsonl")

    with sessions.lock("run-1"):
        assert (project / ".agent-receipts.jsonl.counterfoil" / "sessions" / "run-1").is_dir()
    assert (project / "sessions").read_text() == "the project's sessions file\n"


def test_receipts_gc_leaves_the_projects_objects_alone(project: Path) -> None:
    workspace = gate(project)
    workspace.read_file("app.py")
    workspace.execute(EDIT)
    (project / "objects" / ("a" * 64)).write_text("a project file named like a digest\n")
    del workspace

    collect_garbage(project / ".agent-receipts.jsonl")

    assert (project / "objects" / ("a" * 64)).exists()
