"""Review mode: what a person is shown before an Accept, what an Accept applies (all of it or
nothing), and what the record says about the decision."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace
from counterfoil.cli.approvals import proposal_diff, proposal_header
from counterfoil.cli.receipts import describe_receipt
from counterfoil.cli.terminal import format_verdict
from counterfoil.commands.tree.review import SET_ID_REFUSED, ReviewCopy
from counterfoil.commands.tree.snapshot import TreeLimits, TreeRules
from counterfoil.context.compaction import COMPACTED_PREFIX, compacted_record
from counterfoil.errors import AgentError
from counterfoil.files.path_text import shown_path
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.lsp.approvals.confirm_messages import preview
from counterfoil.lsp.runs.run_messages import step_dict, verdict_message
from counterfoil.proposals import ChangeSetProposal, ToolProposal
from counterfoil.receipts.verify import last_results
from counterfoil.verdict import compute_verdict

PYTHON = sys.executable
LOG = ".counterfoil/receipts.jsonl"
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="review on Linux needs bubblewrap (apt-get install bubblewrap)",
)

Answer = Callable[[ToolProposal], bool]


def accept(_: ToolProposal) -> bool:
    return True


def reject_changes(proposal: ToolProposal) -> bool:
    return not isinstance(proposal, ChangeSetProposal)


def reviewed(
    root: Path, tool: str, answer: Answer = accept, limits: TreeLimits | None = None
) -> tuple[Workspace, list[Any]]:
    """A workspace in review mode whose one allowed command is `python tool.py` (its changes
    listed within `limits`); the proposals it asks about are collected."""
    root.mkdir(exist_ok=True)
    (root / ".counterfoil").mkdir()
    (root / "tool.py").write_text(tool)
    asked: list[ToolProposal] = []

    def confirm(proposal: ToolProposal) -> bool:
        asked.append(proposal)
        return answer(proposal)

    policy = ToolPolicy(
        root,
        allow_writes=True,
        allowed_commands=((PYTHON, "tool.py"),),
        command_sandbox="review",
        command_timeout_seconds=60.0,
    )
    store = ReceiptStore(root / LOG, signer=None)
    setup = WorkspaceSetup(tree_limits=limits or TreeLimits())
    return make_workspace(policy, store=store, confirm_proposal=confirm, setup=setup), asked


def run(space: Workspace) -> str:
    return space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))


def last_line(root: Path) -> dict[str, Any]:
    line: dict[str, Any] = json.loads((root / LOG).read_text().splitlines()[-1])
    return line


FORMATTER = "import pathlib\npathlib.Path('greet.py').write_text('print(\"hi\")\\n')\n"


def test_a_rejected_reviewed_command_does_not_validate_the_change_before_it(
    tmp_path: Path,
) -> None:
    space, _ = reviewed(tmp_path, FORMATTER, reject_changes)
    space.execute(ToolAction("write_file", {"path": "greet.py", "content": "print( 'hi' )\n"}))

    run(space)

    verdict = compute_verdict(space.effect_outcomes)
    assert verdict.validation == "not_run"
    assert verdict.review_rejected == ("call-2",)
    assert not verdict.succeeded


def test_a_rejected_review_after_a_passing_validation_leaves_it_passed(tmp_path: Path) -> None:
    space, _ = reviewed(tmp_path, "print('ok')\n", reject_changes)
    space.execute(ToolAction("write_file", {"path": "greet.py", "content": "print( 'hi' )\n"}))
    run(space)  # validates: it changed nothing
    (tmp_path / "tool.py").write_text(FORMATTER)

    run(space)  # formats greet.py in its copy; the person rejects that

    verdict = compute_verdict(space.effect_outcomes)
    assert (tmp_path / "greet.py").read_text() == "print( 'hi' )\n"
    assert verdict.validation == "passed"
    assert verdict.validated_by == "call-2"
    assert verdict.review_rejected == ("call-3",)
    assert "; 3 approved, 0 rejected, 0 refused, 0 failed, 1 review rejected;" in verdict.summary()


def test_a_rejected_review_is_counted_in_the_terminal_and_the_daemons_verdict(
    tmp_path: Path,
) -> None:
    space, _ = reviewed(tmp_path, FORMATTER, reject_changes)
    (tmp_path / "greet.py").write_text("print( 'hi' )\n")
    run(space)
    verdict = compute_verdict(space.effect_outcomes)

    block = format_verdict(verdict, reason="completed", final=None, status=1)

    assert "effects:    1 approved, 0 rejected, 0 refused, 0 failed, 1 review rejected" in block
    assert "stale" not in block
    assert verdict_message(verdict, True).reviewRejected == ["call-1"]


def test_an_accepted_reviewed_command_that_changed_nothing_validates(tmp_path: Path) -> None:
    space, _ = reviewed(tmp_path, "print('ok')\n")
    space.execute(ToolAction("write_file", {"path": "greet.py", "content": "print('hi')\n"}))

    run(space)

    assert compute_verdict(space.effect_outcomes).validation == "passed"


def test_a_rejected_review_is_on_the_step_and_in_the_compacted_record(tmp_path: Path) -> None:
    space, _ = reviewed(tmp_path, FORMATTER, reject_changes)
    (tmp_path / "greet.py").write_text("print( 'hi' )\n")

    step = space.execute_step(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))

    assert step.effect is not None and step.effect.review == "rejected"
    assert step.effect.tree_changes == ()
    receipt = space.receipt_store.get(step.call_id or "")
    assert receipt is not None
    record = json.loads(compacted_record(receipt, 160).removeprefix(COMPACTED_PREFIX))
    assert record["review"] == {"decision": "rejected", "applied": 0}


def test_a_partly_applied_review_says_partially_accepted(tmp_path: Path) -> None:
    tool = (
        "import os, pathlib\n"
        "pathlib.Path('made.txt').write_text('x')\n"
        "os.symlink('made.txt', 'link')\n"
    )
    space, _ = reviewed(tmp_path, tool)

    observation = run(space)

    assert last_line(tmp_path)["review"]["decision"] == "partially accepted"
    assert "[review: partially accepted; 1 file(s) applied to the root, 1 left alone]" in (
        observation
    )
    assert compute_verdict(space.effect_outcomes).validation == "stale"


MANY = "import pathlib\nfor n in range(7):\n    pathlib.Path(f'f{n}.txt').write_text(str(n))\n"


def test_a_review_with_more_changes_than_it_lists_is_refused_whole(tmp_path: Path) -> None:
    space, asked = reviewed(tmp_path, MANY, limits=TreeLimits(max_listed_changes=5))

    observation = run(space)

    assert not any(isinstance(proposal, ChangeSetProposal) for proposal in asked)
    assert not list(tmp_path.glob("f*.txt"))
    assert (
        "[review: not applied: the command changed 7 files, more than the 5 a review can "
        "show; nothing was applied]" in observation
    )
    assert last_line(tmp_path)["review"]["decision"] == "not applied"


def test_a_rejected_review_leaves_no_recorded_state_for_the_files_it_changed_in_the_copy(
    tmp_path: Path,
) -> None:
    space, _ = reviewed(tmp_path, FORMATTER, reject_changes)
    (tmp_path / "greet.py").write_text("print( 'hi' )\n")

    run(space)

    assert "greet.py" not in last_results(tmp_path / LOG)


CHMOD = (
    "import os, pathlib\n"
    "os.chmod('run.sh', 0o777)\n"
    "pathlib.Path('suid').write_text('x')\n"
    "os.chmod('suid', 0o4755)\n"
)


def shown_change_set(root: Path, tool: str) -> tuple[ChangeSetProposal, str]:
    """The change set a reviewed `tool` offers, and its observation (after an Accept)."""
    space, asked = reviewed(root, tool)
    observation = run(space)
    change_set = asked[1]
    assert isinstance(change_set, ChangeSetProposal)
    return change_set, observation


def test_the_terminal_approval_shows_every_mode_change(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo hi\n")
    (tmp_path / "run.sh").chmod(0o644)

    change_set, _ = shown_change_set(tmp_path, CHMOD)

    assert "mode run.sh: 0644 -> 0777 (world-writable)\n" in proposal_diff(change_set)


def test_the_editor_preview_carries_every_mode_change(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo hi\n")
    (tmp_path / "run.sh").chmod(0o644)

    change_set, _ = shown_change_set(tmp_path, CHMOD)

    files = {item["path"]: item for item in preview(change_set, tmp_path)["files"]}
    assert (files["run.sh"]["currentMode"], files["run.sh"]["mode"]) == (0o644, 0o777)
    assert files["run.sh"]["changesMode"] is True


def test_a_setuid_or_setgid_bit_is_never_applied(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo hi\n")

    change_set, observation = shown_change_set(tmp_path, CHMOD)

    assert ("suid", SET_ID_REFUSED) in change_set.left_alone
    assert not (tmp_path / "suid").exists()
    assert (tmp_path / "run.sh").stat().st_mode & 0o777 == 0o777
    assert "partially accepted" in observation


FORGED = "x\n  left alone: deploy.sh (protected)\r\x1b[2K"
MAKES_FORGED = f"import pathlib\npathlib.Path({FORGED!r}).write_text('x')\n"


def no_forged_line(text: str) -> None:
    assert not any(line.startswith("  left alone: deploy.sh") for line in text.splitlines())
    assert "\r" not in text and "\x1b" not in text


def test_shown_path_escapes_every_control_character() -> None:
    assert shown_path(FORGED) == "x\\x0a  left alone: deploy.sh (protected)\\x0d\\x1b[2K"
    assert shown_path("tab\there\u202e.py") == "tab\\x09here<U+202E>.py"


def test_a_newline_in_a_file_name_forges_no_line_in_the_approval(tmp_path: Path) -> None:
    change_set, _ = shown_change_set(tmp_path, MAKES_FORGED)

    shown = proposal_header(change_set) + proposal_diff(change_set)

    no_forged_line(shown)
    assert "b/x\\x0a  left alone: deploy.sh (protected)\\x0d\\x1b[2K" in shown


def test_a_newline_in_a_file_name_forges_no_line_in_the_observation(tmp_path: Path) -> None:
    _, observation = shown_change_set(tmp_path, MAKES_FORGED)

    no_forged_line(observation)
    assert "created x\\x0a  left alone: deploy.sh (protected)\\x0d\\x1b[2K" in observation


def test_a_newline_in_a_file_name_forges_no_line_in_receipts_show(tmp_path: Path) -> None:
    space, _ = reviewed(tmp_path, MAKES_FORGED)
    step = space.execute_step(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))
    receipt = space.receipt_store.get(step.call_id or "")
    assert receipt is not None

    no_forged_line(describe_receipt(receipt))


SPARSE_BYTES = 128 * 1024 * 1024


def test_a_sparse_file_stays_sparse_in_the_review_copy(tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    with image.open("wb") as file:
        file.truncate(SPARSE_BYTES)
        file.seek(SPARSE_BYTES // 2)
        file.write(b"data in the middle")
    if image.stat().st_blocks * 512 >= SPARSE_BYTES:
        pytest.skip("this file system does not keep holes")

    review = ReviewCopy(tmp_path, TreeRules())
    try:
        copied = review.copy / "disk.img"
        assert copied.stat().st_size == SPARSE_BYTES
        assert copied.stat().st_blocks * 512 < 1024 * 1024
        with copied.open("rb") as file:
            file.seek(SPARSE_BYTES // 2)
            assert file.read(18) == b"data in the middle"
    finally:
        review.remove()


def test_the_review_copy_leaves_caches_out_and_shares_installs(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0" * 4096)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "tool").write_text("installed\n")

    review = ReviewCopy(tmp_path, TreeRules())
    try:
        assert not (review.copy / "pkg" / "__pycache__").exists()
        assert list((review.copy / ".venv").iterdir()) == []
        assert review.shared == (tmp_path / ".venv",)
    finally:
        review.remove()


READS_THE_INSTALL = (
    "import pathlib\n"
    "print(pathlib.Path('.venv/bin/tool').read_text().strip())\n"
    "pathlib.Path('.venv/bin/other').write_text('x')\n"
)


def test_a_reviewed_command_reads_the_real_installs_read_only(tmp_path: Path) -> None:
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "tool").write_text("installed\n")
    space, _ = reviewed(tmp_path, READS_THE_INSTALL)

    observation = run(space)

    assert "installed" in observation
    assert "Read-only file system" in observation
    assert not (tmp_path / ".venv" / "bin" / "other").exists()


@contextmanager
def as_another_user() -> Iterator[None]:
    """Root reads every file: the copy is made as `nobody` (a test run as a user is one)."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


def test_an_unreadable_file_stops_the_review_with_one_sentence_naming_it() -> None:
    root = Path(tempfile.mkdtemp(prefix="counterfoil-unreadable-"))
    try:
        root.chmod(0o755)
        (root / "ok.txt").write_text("ok\n")
        (root / "ok.txt").chmod(0o644)
        (root / "secret.txt").write_text("secret\n")
        (root / "secret.txt").chmod(0o000)

        with as_another_user(), pytest.raises(AgentError) as raised:
            ReviewCopy(root, TreeRules())

        assert str(raised.value) == (
            "review cannot copy secret.txt (Permission denied); make it readable or remove it, "
            "the command was not run"
        )
    finally:
        shutil.rmtree(root)


def test_a_rejected_reviewed_command_has_nothing_to_revert(tmp_path: Path) -> None:
    space, _ = reviewed(tmp_path, FORMATTER, reject_changes)
    (tmp_path / "greet.py").write_text("print( 'hi' )\n")
    step = space.execute_step(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))

    observation = space.revert_step(step.call_id or "").observation

    assert observation == f"error: nothing of {step.call_id} can be reverted (it changed no file)"


def test_receipts_show_says_a_rejected_review_landed_nothing(tmp_path: Path) -> None:
    space, _ = reviewed(tmp_path, FORMATTER, reject_changes)
    (tmp_path / "greet.py").write_text("print( 'hi' )\n")
    step = space.execute_step(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))
    receipt = space.receipt_store.get(step.call_id or "")
    assert receipt is not None

    shown = describe_receipt(receipt)
    assert "  review rejected: nothing landed in the root\n" in shown
    assert "  changes it made in its review copy 1\n" in shown
    assert "  tree changes" not in shown


def test_receipts_show_says_an_approved_then_rejected_command_was_approved_only_to_run(
    tmp_path: Path,
) -> None:
    space, _ = reviewed(tmp_path, FORMATTER, reject_changes)
    (tmp_path / "greet.py").write_text("print( 'hi' )\n")
    step = space.execute_step(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))
    receipt = space.receipt_store.get(step.call_id or "")
    assert receipt is not None

    (approved,) = [line for line in describe_receipt(receipt).splitlines() if "approved" in line]

    assert approved.endswith("(to run it; its changes were rejected)")


def test_the_daemons_step_record_carries_the_review_decision(tmp_path: Path) -> None:
    space, _ = reviewed(tmp_path, FORMATTER, reject_changes)
    (tmp_path / "greet.py").write_text("print( 'hi' )\n")

    step = space.execute_step(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))

    assert step_dict(step)["effect"]["review"] == "rejected"
