"""A receipt's evidence is typed (`receipt_fields.py`) and changes nothing on disk: a line
read back and written again has the same bytes, what this version cannot read survives it, and
each effect writes its evidence's keys in the order the log always had them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.receipts import receipt
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy
from counterfoil.errors import AgentError
from counterfoil.receipt_fields import (
    ApprovalRecord,
    ModelRecord,
    TreeChangeRecord,
)
from counterfoil.receipts import EffectReceipt
from counterfoil.receipts.chain import receipt_from_line
from counterfoil.receipts.record import CHAIN_KEY, encode_line

LOG = ".counterfoil/receipts.jsonl"
COMMAND = ("sh", "-c", "echo hi > made.txt; rm app.py")
MODEL = {
    "spec": "qwen3-4b",
    "resolved": {"engine": "mlx"},
    "weights_sha256": None,
    "chat_template_sha256": None,
    "constrained": True,
    "sampling": {"temperature": 0.0},
}


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """A log holding a new file, an edit, two commands (one changes the tree) and two reverts."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("answer = 1\n")
    (root / ".counterfoil").mkdir()
    policy = ToolPolicy(
        root, allow_writes=True, allowed_commands=(COMMAND, ("true",)), create_parent_folders=True
    )
    space = make_workspace(
        policy, answer=True, store=ReceiptStore(root / LOG, signer=None), run_id="run-1"
    )
    space.record_model(MODEL)
    space.read_file("app.py")
    space.execute(ToolAction("write_file", {"path": "src/pkg/mod.py", "content": "x = 1\n"}))
    space.execute(ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"}))
    space.execute(ToolAction("run_command", {"argv": ["true"]}))
    space.execute(ToolAction("run_command", {"argv": list(COMMAND)}))
    space.revert_step("call-1")
    space.revert_step("call-4")
    return root / LOG


def lines(log: Path) -> list[bytes]:
    return log.read_bytes().splitlines()


def keys(raw: bytes) -> list[str]:
    return list(json.loads(raw))


def body(raw: bytes) -> bytes:
    """The line as the receipt writes it: without its chain link (the log is unsigned)."""
    record = json.loads(raw)
    del record[CHAIN_KEY]
    return json.dumps(record, separators=(",", ":")).encode()


def test_every_line_read_back_is_written_again_with_the_same_bytes(log: Path) -> None:
    for raw in lines(log):
        receipt = receipt_from_line(raw, complete=True)
        assert json.dumps(receipt.to_dict(), separators=(",", ":")).encode() == body(raw)


def test_every_line_reencoded_on_its_chain_is_the_line(log: Path) -> None:
    link = ""  # the first line's link starts from nothing
    for raw in lines(log):
        encoded, link = encode_line(receipt_from_line(raw, complete=True), link)
        assert encoded == raw


def test_each_effect_writes_its_evidence_in_the_order_the_log_always_had(log: Path) -> None:
    course = ["receipt_id", "tool_call_id", "tool", "arguments", "exit_state", "result"]
    course.append("changed_artifacts")
    written = [keys(raw)[len(course) :] for raw in lines(log)]
    command = ["argv", "cwd", "exit_status", "duration_seconds", "output_sha256"]
    command += ["output_truncated", "tree_changes"]
    assert written == [
        [
            "run_id",
            "base_sha256",
            "result_sha256",
            "created_folders",
            "approval",
            "time",
            CHAIN_KEY,
        ],
        ["run_id", "base_sha256", "result_sha256", "approval", "time", CHAIN_KEY],
        ["run_id", *command, "sandbox", "approval", "time", CHAIN_KEY],
        ["run_id", *command, "sandbox", "approval", "time", CHAIN_KEY],
        ["run_id", "base_sha256", "result_sha256", "reverts", "removed_folders", "approval"]
        + ["time", CHAIN_KEY],
        ["run_id", "tree_changes", "reverts", "approval", "time", CHAIN_KEY],
    ]


def test_a_new_files_digest_before_is_written_as_null_not_left_out(log: Path) -> None:
    first = json.loads(lines(log)[0])
    assert first["base_sha256"] is None
    assert receipt_from_line(lines(log)[0], complete=True).evidence.writes_file


def test_the_approval_names_the_model_as_its_identity_recorded_it(log: Path) -> None:
    receipt = receipt_from_line(lines(log)[1], complete=True)
    approval = receipt.evidence.approval
    assert approval is not None and approval.model is not None
    assert approval.model.as_record() == MODEL
    assert list(json.loads(lines(log)[1])["approval"]) == [
        "decision",
        "by",
        "via",
        "shown_sha256",
        "modified",
        "grant",
        "model",
    ]


def test_a_commands_changes_are_read_as_typed_records(log: Path) -> None:
    evidence = receipt_from_line(lines(log)[3], complete=True).evidence
    assert evidence.tree_changes is not None
    changes = evidence.tree_changes.changes
    assert changes is not None
    assert [(change.change, change.path) for change in changes] == [
        ("deleted", "app.py"),
        ("created", "made.txt"),
    ]
    assert all(isinstance(change, TreeChangeRecord) for change in changes)
    assert evidence.argv == COMMAND


def line_with(evidence: dict[str, Any]) -> bytes:
    """A receipt's line with `evidence` written into it as a newer (or older) version might."""
    line = {**receipt(1).to_dict(), "run_id": "run-1", **evidence}
    return json.dumps(line, separators=(",", ":")).encode()


def test_a_key_this_version_does_not_know_in_a_part_survives_a_round_trip() -> None:
    newer = {
        "approval": {"decision": "approved", "by": "ann", "reviewed_by": ["bob"], "via": "cli"},
        "sandbox": {"mode": "confine", "mechanism": "bubblewrap", "cpu_seconds": 30},
    }
    raw = line_with(newer)
    receipt = receipt_from_line(raw, complete=True)
    approval = receipt.evidence.approval
    assert approval is not None and approval.by == "ann"
    assert approval.unread == {"reviewed_by": ["bob"]}
    assert json.dumps(receipt.to_dict(), separators=(",", ":")).encode() == raw


def test_a_value_not_of_its_type_is_kept_unread_and_not_acted_on() -> None:
    older = {"base_sha256": 7, "result_sha256": "r" * 64, "sandbox": "confine"}
    raw = line_with(older)
    evidence = receipt_from_line(raw, complete=True).evidence
    assert evidence.base_sha256 is None and evidence.sandbox is None
    assert evidence.unread == {"base_sha256": 7, "sandbox": "confine"}
    assert not evidence.writes_file  # so revert does not read it as "the file was new"
    assert evidence.as_record() == {"run_id": "run-1", **older}


def test_keys_keep_the_order_the_line_had_and_null_stays_null() -> None:
    raw = line_with({"approval": {"via": "cli", "model": None, "decision": "approved"}})
    receipt = receipt_from_line(raw, complete=True)
    assert list(receipt.to_dict()["approval"]) == ["via", "model", "decision"]
    assert json.dumps(receipt.to_dict(), separators=(",", ":")).encode() == raw


def test_two_evidences_are_equal_when_their_records_are_whatever_the_order() -> None:
    read = ApprovalRecord.from_record({"via": "cli", "decision": "approved"})
    built = ApprovalRecord(decision="approved", via="cli")
    assert read == built
    assert ModelRecord.from_record({"spec": "m"}) != ModelRecord(spec="m")  # the line had no nulls


def test_an_unknown_key_beside_the_course_fields_is_still_refused() -> None:
    """Only a part's keys are kept unread: a line with a key of its own this version does not
    know is malformed, as it always was."""
    line = json.loads(line_with({"signed_by_ci": True}))
    with pytest.raises(AgentError, match="malformed"):
        EffectReceipt.from_dict(line)
