"""The person's answer in the core: a reason with a No, other text with a Yes, bools still work."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace, log_path, write
from tests.support.workspaces import make_workspace

from counterfoil.gate.approval import MAX_REASON_CHARS, Approval, clean_reason
from counterfoil.gate.edited_approval import edited_observation, kept_changes, proposal_diff
from counterfoil.loop import AgentLimits, run_agent


@pytest.mark.parametrize(
    ("answer", "approved"),
    [
        (True, True),
        (Approval(True), True),
        (False, False),
        (Approval(False), False),
        (1, False),
        ("yes", False),
        (Approval(1), False),
        (None, False),
    ],  # type: ignore[arg-type]
)
def test_only_true_or_an_approving_approval_approves(answer: object, approved: bool) -> None:
    assert Approval.of(answer).approved is approved


def test_a_reason_is_one_bounded_line_without_control_characters() -> None:
    assert clean_reason("no\n\tthanks\x1b[0m\u202e!") == "no thanks [0m !"
    assert clean_reason("   ") is None
    assert clean_reason(42) is None
    long = clean_reason("x" * 2000)
    assert long is not None and len(long) == MAX_REASON_CHARS and long.endswith("…")


def test_a_reason_reaches_the_model_after_the_specs_prefix(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    workspace = make_workspace(
        tmp_path, confirm_proposal=lambda _: Approval(False, "keep\nit"), allow_writes=True
    )
    workspace.read_file("a.txt")

    observation = workspace.execute(write("a.txt", "b\n"))

    assert observation == "error: operator denied the tool action: keep it"
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert workspace.effect_outcomes[-1].state == "rejected"
    assert workspace.effect_outcomes[-1].reason == "keep it"


def test_confirm_tool_returning_a_bool_still_approves(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, confirm_tool=lambda action: True, allow_writes=True)
    assert workspace.execute(write("new.txt", "n\n")) == "wrote new.txt"


def test_an_edited_approval_writes_the_text_and_records_both_digests(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\nx\ntwo\n")
    workspace = approving_workspace(
        tmp_path, confirm_proposal=lambda _: Approval(True, text="one\nx\n2\n")
    )
    workspace.read_file("a.txt")

    observation = workspace.execute(write("a.txt", "1\nx\n2\n"))

    assert (tmp_path / "a.txt").read_text() == "one\nx\n2\n"
    assert observation.startswith(
        "wrote a.txt (the person changed your proposal before approving: 1 of 2 changes kept)"
    )
    line = json.loads(log_path(tmp_path).read_text().splitlines()[-1])
    digest = hashlib.sha256(b"one\nx\n2\n").hexdigest()
    assert line["approval"]["modified"] is True
    assert line["approval"]["shown_sha256"] == hashlib.sha256(b"1\nx\n2\n").hexdigest()
    assert line["approval"]["approved_sha256"] == line["result_sha256"] == digest
    assert (log_path(tmp_path).parent / "objects" / digest).exists()


def test_an_edited_text_equal_to_the_proposal_is_a_plain_approval(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path, confirm_proposal=lambda _: Approval(True, text="n\n"))

    assert workspace.execute(write("n.txt", "n\n")) == "wrote n.txt"
    line = json.loads(log_path(tmp_path).read_text().splitlines()[-1])
    assert line["approval"]["modified"] is False


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (b"bytes", "error: edited text must be a string"),
        ("\ud800", "error: edited text must be valid Unicode text"),
        ("x" * 65, "error: edited text exceeds 64 bytes"),
    ],
)
def test_an_edited_text_is_checked_like_any_write(tmp_path: Path, text: object, error: str) -> None:
    workspace = make_workspace(
        tmp_path,
        confirm_proposal=lambda _: Approval(True, text=text),
        allow_writes=True,
        max_write_bytes=64,
    )
    assert workspace.execute(write("n.txt", "n\n")) == error
    assert not (tmp_path / "n.txt").exists()
    assert workspace.effect_outcomes[-1].state == "refused"


def test_kept_changes_counts_the_hunks_the_person_kept() -> None:
    base = "a\nb\nc\nd\n"
    proposed = "A\nb\nc\nD\n"
    assert kept_changes(base, proposed, "A\nb\nc\nd\n") == (1, 2)
    assert kept_changes(base, proposed, base) == (0, 2)
    assert kept_changes(base, proposed, proposed) == (2, 2)
    assert kept_changes(base, proposed, "something else\n") is None
    assert kept_changes(None, "new\n", "") == (0, 1)


def test_an_edit_of_line_endings_alone_is_named_as_such() -> None:
    observation = edited_observation("edited", "a.txt", "a\r\nb\r\n", "a\r\nB\n", "a\r\nB\r\n")
    assert observation.startswith(
        "edited a.txt (the person changed your proposal before approving: "
        "only line endings were changed)"
    )


def test_the_diff_for_the_model_is_bounded() -> None:
    diff = proposal_diff("a.txt", "x\n" * 5000, "y\n" * 5000)
    assert len(diff) <= 2000 + len("\n… (diff truncated)")
    assert diff.endswith("… (diff truncated)")


def test_run_agent_continues_a_kept_conversation(tmp_path: Path) -> None:
    seen: list[list[dict[str, str]]] = []

    def model(messages: list[dict[str, str]]) -> str:
        seen.append([dict(m) for m in messages])
        return '{"final":"ok"}'

    workspace = make_workspace(tmp_path)
    messages: list[dict[str, str]] = []
    run_agent("first", model, workspace, AgentLimits(), messages=messages)
    run_agent("second", model, workspace, AgentLimits(), messages=messages)

    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    assert seen[1][:3] == messages[:3] and seen[1][3] == {"role": "user", "content": "second"}


def test_a_failing_model_call_after_a_stop_is_a_cancel(tmp_path: Path) -> None:
    stop = [False]

    def model(messages: list[dict[str, str]]) -> str:
        stop[0] = True
        raise RuntimeError("stopped mid-generation")

    run = run_agent("go", model, make_workspace(tmp_path), should_stop=lambda: stop[0])

    assert (run.reason, run.error) == ("cancelled", None)


def test_the_spec_signature_still_runs(tmp_path: Path) -> None:
    run = run_agent("go", lambda messages: '{"final":"ok"}', make_workspace(tmp_path))
    assert run.final == "ok"
