"""What an approved command does to the tree is on its receipt; what happens between commands is
drift, reported apart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.tree_files import settled, written_long_ago
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace, verify_receipt_log
from counterfoil.commands.tree.snapshot import TreeLimits
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.receipts.content import load_object
from counterfoil.verdict import compute_verdict

PYTHON = sys.executable
LOG = ".counterfoil/receipts.jsonl"


def script(root: Path, name: str, body: str) -> tuple[str, ...]:
    (root / name).write_text(body)
    return (PYTHON, name)


def workspace(
    root: Path, *commands: tuple[str, ...], limits: TreeLimits | None = None
) -> Workspace:
    (root / ".counterfoil").mkdir(exist_ok=True)
    policy = ToolPolicy(root, allow_writes=True, allowed_commands=commands)
    store = ReceiptStore(root / LOG, signer=None)
    setup = WorkspaceSetup(tree_limits=limits or TreeLimits())
    return make_workspace(policy, store=store, answer=True, setup=setup)


def run(space: Workspace, argv: tuple[str, ...]) -> str:
    return space.execute(ToolAction("run_command", {"argv": list(argv)}))


def last_line(root: Path) -> dict[str, Any]:
    line: dict[str, Any] = json.loads((root / LOG).read_text().splitlines()[-1])
    return line


TOOL = (
    "import os, pathlib\n"
    "os.makedirs('gen', exist_ok=True)\n"
    "pathlib.Path('gen/out.txt').write_text('out\\n')\n"
    "pathlib.Path('data.txt').write_text('after\\n')\n"
    "os.remove('old.txt')\n"
)


def tool_project(root: Path) -> tuple[Workspace, tuple[str, ...]]:
    (root / "data.txt").write_text("before\n")
    (root / "old.txt").write_text("old\n")
    tool = script(root, "tool.py", TOOL)
    return workspace(root, tool), tool


def test_a_command_receipt_records_each_file_it_created_modified_and_deleted(
    tmp_path: Path,
) -> None:
    space, tool = tool_project(tmp_path)

    run(space, tool)

    record = last_line(tmp_path)["tree_changes"]
    assert [(c["path"], c["change"]) for c in record["changes"]] == [
        ("data.txt", "modified"),
        ("gen/out.txt", "created"),
        ("old.txt", "deleted"),
    ]
    assert record["count"] == 3


def test_the_bytes_before_and_after_a_command_are_in_the_content_store(tmp_path: Path) -> None:
    space, tool = tool_project(tmp_path)

    run(space, tool)

    changes = {c["path"]: c for c in last_line(tmp_path)["tree_changes"]["changes"]}
    folder = tmp_path / ".counterfoil"
    assert load_object(folder, changes["data.txt"]["before_sha256"]) == b"before\n"
    assert load_object(folder, changes["data.txt"]["after_sha256"]) == b"after\n"
    assert load_object(folder, changes["old.txt"]["before_sha256"]) == b"old\n"


def test_a_command_keeps_the_course_meaning_of_changed_artifacts(tmp_path: Path) -> None:
    space, tool = tool_project(tmp_path)

    run(space, tool)

    assert last_line(tmp_path)["changed_artifacts"] == []


def test_the_chain_covers_the_tree_changes(tmp_path: Path) -> None:
    space, tool = tool_project(tmp_path)
    run(space, tool)
    log = tmp_path / LOG
    log.write_text(log.read_text().replace('"gen/out.txt"', '"gen/other.txt"'))

    assert not verify_receipt_log(log).ok


def test_the_observation_tells_the_model_what_the_command_changed(tmp_path: Path) -> None:
    space, tool = tool_project(tmp_path)

    observation = run(space, tool)

    assert "files changed by the command (3):\n  modified data.txt\n" in observation
    assert "  deleted old.txt" in observation


def test_the_observation_is_bounded_and_counts_the_rest(tmp_path: Path) -> None:
    many = script(tmp_path, "many.py", "for i in range(30): open(f'f{i:02}.txt', 'w').close()\n")
    space = workspace(tmp_path, many)

    observation = run(space, many)

    assert "files changed by the command (30):" in observation
    assert "  created f19.txt\n  [and 10 more]" in observation
    assert "f20.txt" not in observation


def test_changes_beyond_the_listed_cap_are_counted(tmp_path: Path) -> None:
    many = script(tmp_path, "many.py", "for i in range(30): open(f'f{i:02}.txt', 'w').close()\n")
    space = workspace(tmp_path, many, limits=TreeLimits(max_listed_changes=5))

    run(space, many)

    record = last_line(tmp_path)["tree_changes"]
    assert (record["listed"], record["count"]) == (5, 30)


def test_caches_and_gitignored_paths_are_counted_not_listed(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    body = (
        "import os\n"
        "for folder in ('__pycache__', 'node_modules/x', 'build'): os.makedirs(folder)\n"
        "open('build/a.o', 'w').close(); open('run.log', 'w').close()\n"
        "open('__pycache__/m.pyc', 'w').close(); open('kept.txt', 'w').close()\n"
    )
    tool = script(tmp_path, "make.py", body)
    space = workspace(tmp_path, tool)

    run(space, tool)

    record = last_line(tmp_path)["tree_changes"]
    assert [c["path"] for c in record["changes"]] == ["kept.txt"]
    assert record["ignored"]["cache"] == 2
    assert record["ignored"]["gitignore"] == 2


def test_a_file_written_into_a_left_out_virtual_environment_is_counted(tmp_path: Path) -> None:
    (tmp_path / ".venv" / "lib" / "site-packages").mkdir(parents=True)
    body = "open('.venv/lib/site-packages/sitecustomize.py', 'w').write('import os\\n')\n"
    tool = script(tmp_path, "tool.py", body)
    space = workspace(tmp_path, tool)

    observation = run(space, tool)

    record = last_line(tmp_path)["tree_changes"]
    assert record["count"] == 0
    assert record["left_out_changes"] == [{"path": ".venv", "why": "cache", "entries": 1}]
    assert "[1 entry changed in .venv (left out: cache)]" in observation


def test_a_rewrite_in_place_inside_a_left_out_folder_is_counted(tmp_path: Path) -> None:
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    written_long_ago(tmp_path / "node_modules" / "pkg" / "index.js", "one\n")
    body = (
        "import os\n"
        "path = 'node_modules/pkg/index.js'\n"
        "with open(path, 'r+') as file: file.write('two\\n')\n"
        "os.utime(path, ns=(10**18, 10**18))\n"
    )
    tool = script(tmp_path, "tool.py", body)
    space = workspace(tmp_path, tool)

    run(space, tool)

    (change,) = last_line(tmp_path)["tree_changes"]["left_out_changes"]
    assert (change["path"], change["entries"]) == ("node_modules", 1)


def test_a_left_out_folder_past_the_stat_bound_is_reported_unchecked(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    for index in range(10):
        (tmp_path / "build" / f"{index}.o").write_text("")
    (tmp_path / ".gitignore").write_text("build/\n")
    noop = script(tmp_path, "noop.py", "")
    space = workspace(tmp_path, noop, limits=TreeLimits(max_left_out_entries=3))

    run(space, noop)

    assert last_line(tmp_path)["tree_changes"]["left_out_changes"] == [
        {
            "path": "build",
            "why": "gitignore",
            "entries": None,
            "unchecked": "over 3 entries left out in all",
        }
    ]


def test_a_file_touched_without_new_bytes_is_no_change(tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_text("same\n")
    touch = script(tmp_path, "touch.py", "open('same.txt', 'w').write('same\\n')\n")
    space = workspace(tmp_path, touch)

    run(space, touch)

    assert last_line(tmp_path)["tree_changes"]["count"] == 0


def test_a_mode_change_is_recorded_as_one(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo\n")
    chmod = script(tmp_path, "chmod.py", "import os\nos.chmod('run.sh', 0o755)\n")
    space = workspace(tmp_path, chmod)

    run(space, chmod)

    (change,) = last_line(tmp_path)["tree_changes"]["changes"]
    assert (change["change"], change["before_mode"], change["after_mode"]) == (
        "mode_changed",
        0o644,
        0o755,
    )


def test_a_folder_mode_change_is_recorded_as_one(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir(mode=0o755)
    (tmp_path / "src" / "app.py").write_text("")
    chmod = script(tmp_path, "chmod.py", "import os\nos.chmod('src', 0o777)\n")
    space = workspace(tmp_path, chmod)

    run(space, chmod)

    (change,) = last_line(tmp_path)["tree_changes"]["changes"]
    assert (change["path"], change["change"], change["kind"]) == ("src", "mode_changed", "folder")
    assert (change["before_mode"], change["after_mode"]) == (0o755, 0o777)


def test_a_mode_change_of_the_root_itself_is_recorded(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o755)
    chmod = script(root, "chmod.py", "import os\nos.chmod('.', 0o777)\n")
    space = workspace(root, chmod)

    run(space, chmod)

    (change,) = last_line(root)["tree_changes"]["changes"]
    assert (change["path"], change["change"], change["after_mode"]) == (".", "mode_changed", 0o777)


def git_repository(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def test_a_command_that_sets_git_config_is_recorded(tmp_path: Path) -> None:
    git_repository(tmp_path)
    command = ("git", "config", "core.fsmonitor", "touch owned")
    space = workspace(tmp_path, command)

    run(space, command)

    (change,) = last_line(tmp_path)["tree_changes"]["changes"]
    assert (change["path"], change["change"], change["note"]) == (
        ".git/config",
        "modified",
        "protected",
    )


def test_a_git_hook_written_by_a_command_is_recorded(tmp_path: Path) -> None:
    git_repository(tmp_path)
    body = "import os\nopen('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\n')\n"
    tool = script(tmp_path, "hook.py", body)
    space = workspace(tmp_path, tool)

    observation = run(space, tool)

    changes = last_line(tmp_path)["tree_changes"]["changes"]
    assert [(c["path"], c["change"]) for c in changes] == [(".git/hooks/pre-commit", "created")]
    assert "[1 protected file changed]" in observation


def test_gits_own_bookkeeping_in_the_git_folder_is_not_listed(tmp_path: Path) -> None:
    git_repository(tmp_path)
    (tmp_path / "app.py").write_text("")
    command = ("git", "add", "app.py")
    space = workspace(tmp_path, command)

    run(space, command)

    assert last_line(tmp_path)["tree_changes"]["count"] == 0


REWRITE_IN_PLACE = (
    "import os\n"
    "with open('data.txt', 'r+') as file: file.write('AFTER\\n')\n"
    "os.utime('data.txt', ns=(10**18, 10**18))\n"
)


def test_a_rewrite_in_place_with_the_old_size_and_mtime_put_back_is_recorded(
    tmp_path: Path,
) -> None:
    written_long_ago(tmp_path / "data.txt", "NOTED\n")
    tool = script(tmp_path, "tool.py", REWRITE_IN_PLACE)
    space = workspace(tmp_path, tool)

    run(space, tool)

    (change,) = last_line(tmp_path)["tree_changes"]["changes"]
    assert (change["path"], change["change"]) == ("data.txt", "modified")
    assert os.stat(tmp_path / "data.txt").st_mtime_ns == 10**18


def test_an_edit_between_commands_is_drift_not_the_next_commands_change(tmp_path: Path) -> None:
    noop = script(tmp_path, "noop.py", "")
    space = workspace(tmp_path, noop)
    run(space, noop)
    (tmp_path / "mine.txt").write_text("a person's edit\n")

    observation = run(space, noop)

    line = last_line(tmp_path)
    assert line["tree_changes"]["count"] == 0
    assert line["tree_drift"] == {"paths": ["mine.txt"], "count": 1}
    assert "changed before the command, not by it (1):\n  created mine.txt" in observation


def test_the_gates_own_write_between_commands_is_not_drift(tmp_path: Path) -> None:
    noop = script(tmp_path, "noop.py", "")
    space = workspace(tmp_path, noop)
    run(space, noop)
    space.execute(ToolAction("write_file", {"path": "notes.txt", "content": "x\n"}))

    run(space, noop)

    assert "tree_drift" not in last_line(tmp_path)


def test_the_verdict_lists_files_a_command_changed_with_its_call_id(tmp_path: Path) -> None:
    space, tool = tool_project(tmp_path)

    run(space, tool)

    verdict = compute_verdict(space.effect_outcomes)
    assert [(c.path, c.call_id) for c in verdict.files_changed] == [
        ("data.txt", "call-1"),
        ("gen/out.txt", "call-1"),
        ("old.txt", "call-1"),
    ]
    assert verdict.files_changed[-1].sha256 is None


def test_a_command_that_changes_files_after_passing_validation_makes_it_stale(
    tmp_path: Path,
) -> None:
    check = script(tmp_path, "check.py", "")
    formatter = script(tmp_path, "format.py", "open('app.txt', 'w').write('formatted\\n')\n")
    space = workspace(tmp_path, check, formatter)
    run(space, check)

    run(space, formatter)

    verdict = compute_verdict(space.effect_outcomes)
    assert (verdict.validation, verdict.validated_by) == ("stale", "call-2")


def test_a_passing_command_after_the_one_that_changed_files_validates_them(
    tmp_path: Path,
) -> None:
    check = script(tmp_path, "check.py", "")
    formatter = script(tmp_path, "format.py", "open('app.txt', 'w').write('formatted\\n')\n")
    space = workspace(tmp_path, check, formatter)
    run(space, formatter)

    run(space, check)

    assert compute_verdict(space.effect_outcomes).validation == "passed"


def test_verify_with_a_root_names_a_file_changed_after_the_command_that_left_it(
    tmp_path: Path,
) -> None:
    space, tool = tool_project(tmp_path)
    run(space, tool)
    assert verify_receipt_log(tmp_path / LOG, root=tmp_path).ok

    (tmp_path / "gen" / "out.txt").write_text("changed later\n")

    assert verify_receipt_log(tmp_path / LOG, root=tmp_path).drift == (
        "gen/out.txt changed after call-1",
    )


def test_receipts_gc_keeps_the_bytes_a_commands_tree_changes_name(tmp_path: Path) -> None:
    import io

    from counterfoil.cli.main import main

    space, tool = tool_project(tmp_path)
    run(space, tool)
    changes = {c["path"]: c for c in last_line(tmp_path)["tree_changes"]["changes"]}

    main(["receipts", "gc", str(tmp_path / LOG)], stdout=io.StringIO())

    folder = tmp_path / ".counterfoil"
    assert load_object(folder, changes["data.txt"]["before_sha256"]) == b"before\n"
    assert load_object(folder, changes["old.txt"]["before_sha256"]) == b"old\n"


def test_a_new_workspace_on_the_same_root_starts_from_the_last_snapshot(tmp_path: Path) -> None:
    written_long_ago(tmp_path / "data.txt", "before\n")
    settled()
    noop = script(tmp_path, "noop.py", "")
    first = workspace(tmp_path, noop)
    run(first, noop)
    known = first.command_tree().cache.snapshot
    assert known is not None

    before, drift = workspace(tmp_path, noop).command_tree().before()

    assert before.entries["data.txt"] is known.entries["data.txt"]
    assert drift.count == 0


def test_the_bytes_the_shared_stat_cache_names_outlive_the_store_that_kept_them(
    tmp_path: Path,
) -> None:
    import io

    from counterfoil.cli.main import main

    written_long_ago(tmp_path / "data.txt", "before\n")
    noop = script(tmp_path, "noop.py", "")
    first = workspace(tmp_path, noop)
    run(first, noop)
    first.receipt_store.close()
    digest = first.command_tree().cache.snapshot.entries["data.txt"].digest  # type: ignore[union-attr]

    main(["receipts", "gc", str(tmp_path / LOG)], stdout=io.StringIO())

    assert digest is not None
    assert load_object(tmp_path / ".counterfoil", digest) == b"before\n"
