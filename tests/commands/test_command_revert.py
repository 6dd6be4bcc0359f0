"""Reverting a command: what it changed goes back, file by file, each checked against what the
command left; a file changed since is left alone and named."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy
from counterfoil.cli.approvals import proposal_diff
from counterfoil.cli.main import main
from counterfoil.lsp.approvals.confirm_messages import preview
from counterfoil.proposals import ChangeSetProposal, ToolProposal

PYTHON = sys.executable
LOG = ".counterfoil/receipts.jsonl"
TOOL = (
    "import os, pathlib\n"
    "os.makedirs('gen', exist_ok=True)\n"
    "pathlib.Path('gen/out.txt').write_text('out\\n')\n"
    "pathlib.Path('data.txt').write_text('after\\n')\n"
    "os.remove('old.txt')\n"
)


def ran_tool(root: Path) -> None:
    """The project after an approved `python tool.py` (call-1) that created, modified and
    deleted a file."""
    (root / "data.txt").write_text("before\n")
    (root / "old.txt").write_text("old\n")
    (root / "tool.py").write_text(TOOL)
    (root / ".counterfoil").mkdir()
    policy = ToolPolicy(root, allowed_commands=((PYTHON, "tool.py"),))
    store = ReceiptStore(root / LOG, signer=None)
    space = make_workspace(policy, store=store, answer=True)
    space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))


def revert(root: Path, answers: str = "y\n") -> tuple[int, str]:
    output = io.StringIO()
    status = main(
        ["revert", "call-1", "--root", str(root)], stdin=io.StringIO(answers), stdout=output
    )
    return status, output.getvalue()


def last_line(root: Path) -> dict[str, Any]:
    line: dict[str, Any] = json.loads((root / LOG).read_text().splitlines()[-1])
    return line


def test_reverting_a_command_restores_modified_and_deleted_files_and_removes_created_ones(
    tmp_path: Path,
) -> None:
    ran_tool(tmp_path)

    status, _ = revert(tmp_path)

    assert status == 0
    assert (tmp_path / "data.txt").read_text() == "before\n"
    assert (tmp_path / "old.txt").read_text() == "old\n"
    assert not (tmp_path / "gen" / "out.txt").exists()


def test_the_revert_is_shown_as_diffs_before_it_is_approved(tmp_path: Path) -> None:
    ran_tool(tmp_path)

    _, output = revert(tmp_path, "n\n")

    assert "call-2: revert of call-1: 3 file(s)\n" in output
    assert "--- a/data.txt\n+++ b/data.txt\n@@ -1 +1 @@\n-after\n+before\n" in output
    assert "--- a/gen/out.txt\n+++ /dev/null\n" in output
    assert (tmp_path / "data.txt").read_text() == "after\n"


def test_the_revert_has_its_own_receipt_naming_what_it_reverts(tmp_path: Path) -> None:
    ran_tool(tmp_path)

    revert(tmp_path)

    line = last_line(tmp_path)
    assert (line["tool"], line["reverts"]) == ("revert", "call-1")
    assert line["changed_artifacts"] == ["data.txt", "gen/out.txt", "old.txt"]
    assert [c["change"] for c in line["tree_changes"]["changes"]] == [
        "modified",
        "deleted",
        "created",
    ]


def test_a_file_changed_since_the_command_is_left_alone_and_named(tmp_path: Path) -> None:
    ran_tool(tmp_path)
    (tmp_path / "data.txt").write_text("a person's edit\n")

    status, output = revert(tmp_path)

    assert status == 0
    assert "left alone: data.txt (changed since the command)" in output
    assert (tmp_path / "data.txt").read_text() == "a person's edit\n"
    assert (tmp_path / "old.txt").read_text() == "old\n"


def test_a_file_changed_during_the_approval_is_left_alone_and_named(tmp_path: Path) -> None:
    ran_tool(tmp_path)
    policy = ToolPolicy(tmp_path)

    def edit_while_asked(proposal: ToolProposal) -> bool:
        assert isinstance(proposal, ChangeSetProposal)
        (tmp_path / "data.txt").write_text("edited meanwhile\n")
        return True

    store = ReceiptStore(tmp_path / LOG, signer=None)
    result = make_workspace(policy, store=store, confirm_proposal=edit_while_asked).revert("call-1")

    assert "left alone:\n  data.txt: changed since the command" in result
    assert (tmp_path / "data.txt").read_text() == "edited meanwhile\n"


def test_a_denied_revert_changes_nothing(tmp_path: Path) -> None:
    ran_tool(tmp_path)

    status, _ = revert(tmp_path, "n\n")

    assert status == 1
    assert (tmp_path / "gen" / "out.txt").exists()
    assert not (tmp_path / "old.txt").exists()


def test_a_command_whose_every_file_changed_since_has_nothing_to_revert(tmp_path: Path) -> None:
    ran_tool(tmp_path)
    for name in ("data.txt", "gen/out.txt", "old.txt"):
        (tmp_path / name).write_text("mine\n")

    status, output = revert(tmp_path)

    assert status == 1
    assert output.startswith("error: nothing of call-1 can be reverted (data.txt: changed since")


def test_reverting_a_mode_change_puts_the_mode_back(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo\n")
    (tmp_path / "run.sh").chmod(0o644)
    (tmp_path / "tool.py").write_text("import os\nos.chmod('run.sh', 0o755)\n")
    (tmp_path / ".counterfoil").mkdir()
    policy = ToolPolicy(tmp_path, allowed_commands=((PYTHON, "tool.py"),))
    store = ReceiptStore(tmp_path / LOG, signer=None)
    space = make_workspace(policy, store=store, answer=True)
    space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))

    status, _ = revert(tmp_path)

    assert status == 0
    assert (tmp_path / "run.sh").stat().st_mode & 0o777 == 0o644


def test_a_rewrite_in_place_with_its_old_mtime_put_back_is_reverted(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("NOTED\n")
    os.utime(tmp_path / "data.txt", ns=(10**18, 10**18))
    (tmp_path / "tool.py").write_text(
        "import os\n"
        "with open('data.txt', 'r+') as file: file.write('AFTER\\n')\n"
        "os.utime('data.txt', ns=(10**18, 10**18))\n"
    )
    (tmp_path / ".counterfoil").mkdir()
    policy = ToolPolicy(tmp_path, allowed_commands=((PYTHON, "tool.py"),))
    store = ReceiptStore(tmp_path / LOG, signer=None)
    space = make_workspace(policy, store=store, answer=True)
    space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))
    assert (tmp_path / "data.txt").read_text() == "AFTER\n"

    status, _ = revert(tmp_path)

    assert status == 0
    assert (tmp_path / "data.txt").read_text() == "NOTED\n"


FILE_TO_FOLDER = (
    "import os, pathlib\n"
    "os.remove('out')\n"
    "os.makedirs('out/sub')\n"
    "pathlib.Path('out/sub/a.txt').write_text('a\\n')\n"
)


def ran_file_to_folder(root: Path) -> None:
    """The project after an approved `python tool.py` (call-1) that replaced the file `out`
    by a folder holding `sub/a.txt`."""
    (root / "out").write_text("the file\n")
    (root / "tool.py").write_text(FILE_TO_FOLDER)
    (root / ".counterfoil").mkdir()
    policy = ToolPolicy(root, allowed_commands=((PYTHON, "tool.py"),))
    store = ReceiptStore(root / LOG, signer=None)
    space = make_workspace(policy, store=store, answer=True)
    space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))
    assert (root / "out" / "sub" / "a.txt").is_file()


def test_reverting_a_command_that_replaced_a_file_by_a_folder_restores_the_file(
    tmp_path: Path,
) -> None:
    ran_file_to_folder(tmp_path)

    status, output = revert(tmp_path)

    assert status == 0, output
    assert (tmp_path / "out").is_file()
    assert (tmp_path / "out").read_text() == "the file\n"


def test_a_folder_the_command_made_is_not_removed_once_someone_put_a_file_in_it(
    tmp_path: Path,
) -> None:
    ran_file_to_folder(tmp_path)
    (tmp_path / "out" / "mine.txt").write_text("a person's file\n")

    revert(tmp_path)

    assert (tmp_path / "out" / "mine.txt").read_text() == "a person's file\n"
    assert "out: the folder the command made is not empty now" in last_line(tmp_path)["result"]


def test_the_revert_preview_names_the_folders_the_command_made(tmp_path: Path) -> None:
    ran_file_to_folder(tmp_path)
    asked: list[ToolProposal] = []
    policy = ToolPolicy(tmp_path, allowed_commands=((PYTHON, "tool.py"),))
    store = ReceiptStore(tmp_path / LOG, signer=None)
    space = make_workspace(policy, store=store, confirm_proposal=lambda p: asked.append(p))

    space.revert_step("call-1")

    assert isinstance(asked[0], ChangeSetProposal)
    files = {item["path"]: item for item in preview(asked[0], tmp_path)["files"]}
    assert files["out"]["madeFolders"] == ["out/sub", "out"]
    assert "removes the folders the command made, when empty: out/sub/, out/\n" in (
        proposal_diff(asked[0])
    )
