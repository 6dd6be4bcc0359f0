"""Compaction in the run: past its budget (tokens, or the course's characters) a conversation
elides old reads and compacts old receipted effects to the course's receipt-backed record, in
large steps, only when the count goes down, and never the prompt, the goal, the latest
interactions or an effect without a receipt."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.receipts import log_path
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, ReceiptStore, ToolPolicy, Workspace, run_agent
from counterfoil.context.budget import ContextWindow, count_chars, estimate_tokens
from counterfoil.context.compaction import COMPACTED_PREFIX
from counterfoil.context.evidence import RANGE_PREFIX, range_path

PYTHON = sys.executable
GOAL = "run every check and say which passed"
FINAL = {"final": "all checks ran"}


def check(number: int) -> tuple[str, ...]:
    """A distinct allowed command printing about 3 KB."""
    return (PYTHON, "-c", f"print('check {number} ' + 'x' * 3000)")


CHECKS = tuple(check(number) for number in range(40))


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def command_workspace(root: Path, answer: bool = True) -> Workspace:
    policy = ToolPolicy(root, allowed_commands=CHECKS)
    store = ReceiptStore(log_path(root))
    return make_workspace(policy, store=store, answer=answer)


def commands(count: int) -> list[dict[str, Any]]:
    return [{"tool": "run_command", "argv": list(CHECKS[n])} for n in range(count)]


def compacted(content: str) -> dict[str, Any] | None:
    if not content.startswith(COMPACTED_PREFIX):
        return None
    return json.loads(content.removeprefix(COMPACTED_PREFIX))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def forty_commands(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Workspace]:
    root = tmp_path_factory.mktemp("forty")
    workspace = command_workspace(root)
    model = RecordingModel(*commands(40), FINAL)
    limits = AgentLimits(max_steps=41, max_context_tokens=12_000, max_inline_chars=16_000)
    return model, run_agent(GOAL, model, workspace, limits), workspace


def test_forty_commands_of_three_kilobytes_complete_within_twelve_thousand_tokens(
    forty_commands: tuple[Any, Any, Workspace],
) -> None:
    model, run, _ = forty_commands
    assert run.reason == "completed"
    assert max(estimate_tokens(call) for call in model.calls) <= 12_000


def test_an_old_effect_compacts_to_its_receipt_record(
    forty_commands: tuple[Any, Any, Workspace],
) -> None:
    model, _, workspace = forty_commands
    records = [compacted(m["content"]) for m in model.calls[-1]]
    first = next(record for record in records if record is not None)
    receipt = workspace.receipt_store.receipts()[0]
    assert first["receipt_id"] == receipt.receipt_id
    assert (first["tool"], first["arguments"]) == ("run_command", receipt.arguments)
    assert (first["exit_state"], first["changed_artifacts"]) == ("ok", [])
    assert first["result_preview"].startswith("status: 0\noutput:\ncheck 0 xxx")
    assert "chars omitted" in first["result_preview"]
    assert first["artifact_id"] == f"artifact-{receipt.evidence.output_sha256}"
    assert first["artifact_bytes"] == len(f"check 0 {'x' * 3000}\n")


def test_the_prompt_the_goal_and_the_latest_interactions_stay_verbatim(
    forty_commands: tuple[Any, Any, Workspace],
) -> None:
    model, run, _ = forty_commands
    last = model.calls[-1]
    assert last[0]["role"] == "system" and last[1] == {"role": "user", "content": GOAL}
    assert [m["content"] for m in last[-3::2]] == [
        "Tool result:\n" + (event.told or event.result) for event in run.events[-3:-1]
    ]
    assert all(not (event.result or "").startswith(COMPACTED_PREFIX) for event in run.events)


def test_compaction_happens_in_large_steps(forty_commands: tuple[Any, Any, Workspace]) -> None:
    """Between steps the view only grows at its end; records left behind fill the budget, so
    the steps come closer together towards the end of a long run, but never every turn."""
    model, _, _ = forty_commands
    rewrites = sum(
        1 for before, after in zip(model.calls, model.calls[1:]) if after[: len(before)] != before
    )
    assert 1 <= rewrites <= len(model.calls) // 3


def test_the_model_reads_the_rest_of_a_compacted_effect(tmp_path: Path) -> None:
    workspace = command_workspace(tmp_path)
    limits = AgentLimits(max_steps=20, max_context_chars=20_000, max_inline_chars=16_000)
    first = RecordingModel(*commands(6), FINAL)
    run_agent(GOAL, first, workspace, limits)
    record = next(r for r in map(compacted, (m["content"] for m in first.calls[-1])) if r)
    path = range_path(record["artifact_id"], 0, 20)
    second = RecordingModel(*commands(6), {"tool": "read_file", "path": path}, FINAL)
    run = run_agent(GOAL, second, command_workspace(tmp_path), limits)
    reply = json.loads(run.events[6].result.removeprefix(RANGE_PREFIX))
    assert reply["data"].startswith("check 0 xxx")


def test_an_effect_without_a_receipt_is_never_compacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = command_workspace(tmp_path)
    monkeypatch.setattr(workspace.receipt_store, "get", lambda _call_id: None)
    model = RecordingModel(*commands(8), FINAL)
    limits = AgentLimits(max_steps=9, max_context_chars=20_000, max_inline_chars=16_000)
    run = run_agent(GOAL, model, workspace, limits)
    assert all(compacted(m["content"]) is None for call in model.calls for m in call)
    assert run.reason == "context_limit"


def test_the_character_budget_elides_and_compacts_without_a_token_window(tmp_path: Path) -> None:
    workspace = command_workspace(tmp_path)
    model = RecordingModel(*commands(8), FINAL)
    limits = AgentLimits(max_steps=9, max_context_chars=20_000, max_inline_chars=16_000)
    run = run_agent(GOAL, model, workspace, limits)
    assert run.reason == "completed"
    assert max(count_chars(call) for call in model.calls) <= 20_000
    assert any(compacted(m["content"]) for m in model.calls[-1])


def test_forty_five_reads_of_three_kilobytes_complete_under_the_character_budget(
    tmp_path: Path,
) -> None:
    for number in range(45):
        (tmp_path / f"part_{number:02}.txt").write_text(f"part {number}\n" + "y" * 3_000)
    policy = ToolPolicy(tmp_path)
    workspace = make_workspace(policy, logged=True)
    reads = [{"tool": "read_file", "path": f"part_{n:02}.txt"} for n in range(45)]
    model = RecordingModel(*reads, FINAL)
    run = run_agent(GOAL, model, workspace, AgentLimits(max_steps=46))
    assert run.reason == "completed"
    assert max(count_chars(call) for call in model.calls) <= 48_000


def test_a_repeat_compaction_changes_nothing(forty_commands: tuple[Any, Any, Workspace]) -> None:
    model, _, _ = forty_commands
    view = copy.deepcopy(model.calls[-1])
    records = sum(1 for message in view if compacted(message["content"]))
    window = ContextWindow(view, count_chars(view) // 2, count_chars)  # far over: try again
    window.fits()
    assert sum(1 for message in view if compacted(message["content"])) == records
    assert view == model.calls[-1]


def test_a_step_that_does_not_lower_the_count_is_not_kept(tmp_path: Path) -> None:
    workspace = command_workspace(tmp_path)
    model = RecordingModel(*commands(6), FINAL)

    def flat(messages: list[dict[str, str]]) -> int:
        return 1_000  # always over the budget, whatever is compacted

    limits = AgentLimits(max_steps=7, max_context_tokens=900, max_inline_chars=16_000)
    run = run_agent(GOAL, model, workspace, limits, count_tokens=flat)
    assert run.reason == "context_limit"
    assert all(compacted(m["content"]) is None for call in model.calls for m in call)
