"""Bounded observations in a run: a result over the inline budget is shown as the course's
externalized observation, its bytes are the receipts' content-store object, and the model reads
ranges of it with read_file on `.tool-artifacts/…`; the events and receipts keep it whole."""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.receipts import log_path
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, ReceiptStore, ToolPolicy, Workspace, run_agent
from counterfoil.cli.main import main
from counterfoil.context.evidence import EXTERNALIZED_PREFIX, RANGE_PREFIX, range_path
from counterfoil.context.prompt import build_system_prompt
from counterfoil.errors import AgentError
from counterfoil.files.paths import relative_parts
from counterfoil.receipts.content import OBJECTS_FOLDER
from counterfoil.settings.table import Settings, SettingsError

PYTHON = sys.executable
LINES = 20_000
NUMBERED = (PYTHON, "-c", f"for i in range({LINES}):\n    print(f'line {{i}}')")
NUMBERED_BYTES = "".join(f"line {i}\n" for i in range(LINES)).encode()
FINAL = {"final": "done"}


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def workspace_for(root: Path, store: ReceiptStore | None = None) -> Workspace:
    policy = ToolPolicy(root, allowed_commands=(NUMBERED,), allow_search=True)
    store = store if store is not None else ReceiptStore(log_path(root))
    return make_workspace(policy, store=store, answer=True)


def run(root: Path, *script: dict[str, Any], inline: int = 16_000, **kwargs: Any) -> Any:
    model = RecordingModel(*script)
    workspace = kwargs.pop("workspace", None) or workspace_for(root)
    limits = AgentLimits(max_steps=len(script), max_inline_chars=inline, max_context_chars=10**7)
    result = run_agent("inspect", model, workspace, limits, **kwargs)
    return model, result, workspace


def shown(model: RecordingModel, call: int) -> str:
    """The observation the model saw last, in call `call`."""
    content = model.calls[call][-1]["content"]
    assert content.startswith("Tool result:\n")
    return content.removeprefix("Tool result:\n")


def payload(observation: str, prefix: str) -> dict[str, Any]:
    assert observation.startswith(prefix), observation[:200]
    return json.loads(observation.removeprefix(prefix))  # type: ignore[no-any-return]


def read(path: str) -> dict[str, Any]:
    return {"tool": "read_file", "path": path}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_long_command_output_is_shown_as_previews_of_the_output_its_receipt_names(
    tmp_path: Path,
) -> None:
    model, result, workspace = run(tmp_path, {"tool": "run_command", "argv": list(NUMBERED)}, FINAL)
    seen = shown(model, 1)
    status, externalized = seen.split("\n", 1)
    assert status == "status: 0"
    identity = payload(externalized, EXTERNALIZED_PREFIX)
    receipt = workspace.receipt_store.receipts()[-1]
    assert identity["artifact_id"] == f"artifact-{receipt.evidence.output_sha256}"
    assert identity["byte_count"] == len(NUMBERED_BYTES)
    assert identity["tail_preview"].endswith("line 19999\n")
    assert len(seen) <= 16_000
    assert result.events[0].result == receipt.result  # the events keep what the receipt does
    assert result.events[0].result.startswith("status: 0\noutput:\nline 0\n")


def test_the_model_reads_past_the_old_cut_with_the_range_it_chooses(tmp_path: Path) -> None:
    digest = sha(NUMBERED_BYTES)
    start = NUMBERED_BYTES.index(b"line 15000\n")
    end = start + len(b"line 15000\n")
    path = range_path(f"artifact-{digest}", start, end)
    model, result, _ = run(
        tmp_path, {"tool": "run_command", "argv": list(NUMBERED)}, read(path), FINAL
    )
    reply = payload(shown(model, 2), RANGE_PREFIX)
    assert reply["data"] == "line 15000\n"
    assert (reply["start"], reply["end"], reply["sha256"]) == (start, end, digest)
    assert result.events[1].result == shown(model, 2)
    assert result.reason == "completed"


def test_a_long_read_is_externalized_as_the_file_bytes_themselves(tmp_path: Path) -> None:
    text = "".join(f"row {i:05}\n" for i in range(2_000))  # 20,000 characters
    (tmp_path / "big.txt").write_text(text, encoding="utf-8")
    model, _, _ = run(tmp_path, read("big.txt"), FINAL)
    identity = payload(shown(model, 1), EXTERNALIZED_PREFIX)
    assert identity["sha256"] == sha(text.encode())
    stored = log_path(tmp_path).parent / OBJECTS_FOLDER / identity["sha256"]
    assert stored.read_bytes() == text.encode()


def test_a_large_search_result_is_externalized(tmp_path: Path) -> None:
    (tmp_path / "many.py").write_text("".join(f"hit_{i} = {i}\n" for i in range(190)))
    model, result, _ = run(
        tmp_path, {"tool": "search_files", "pattern": "hit_", "literal": True}, FINAL, inline=1_024
    )
    identity = payload(shown(model, 1), EXTERNALIZED_PREFIX)
    assert identity["byte_count"] == len(result.events[0].result.encode())


def test_a_result_at_the_budget_stays_inline_and_one_more_character_is_externalized(
    tmp_path: Path,
) -> None:
    (tmp_path / "at.txt").write_text("a" * 1_000)
    (tmp_path / "over.txt").write_text("a" * 1_001)
    model, _, _ = run(tmp_path, read("at.txt"), read("over.txt"), FINAL, inline=1_000)
    assert shown(model, 1) == "a" * 1_000
    assert shown(model, 2).startswith(EXTERNALIZED_PREFIX)


def test_the_budget_counts_characters_and_the_observation_fits_it_in_bytes(
    tmp_path: Path,
) -> None:
    (tmp_path / "smile.txt").write_text("🙂" * 600, encoding="utf-8")  # 600 chars, 2,400 bytes
    model, _, _ = run(tmp_path, read("smile.txt"), FINAL, inline=600)
    assert shown(model, 1) == "🙂" * 600
    model, _, _ = run(tmp_path, read("smile.txt"), FINAL, inline=599)
    observation = shown(model, 1)
    assert len(observation.encode()) <= 599


def test_four_byte_characters_keep_previews_and_ranges_on_character_boundaries(
    tmp_path: Path,
) -> None:
    content = "🙂" * 600
    data = content.encode()
    (tmp_path / "smile.txt").write_text(content, encoding="utf-8")
    artifact = f"artifact-{sha(data)}"
    model, _, _ = run(
        tmp_path,
        read("smile.txt"),
        read(range_path(artifact, 4, 12)),
        read(range_path(artifact, 4, 13)),
        FINAL,
        inline=599,
    )
    identity = payload(shown(model, 1), EXTERNALIZED_PREFIX)
    head_end, tail_start = identity["head_range"][1], identity["tail_range"][0]
    assert head_end % 4 == 0 and tail_start % 4 == 0
    assert identity["head_preview"] == "🙂" * (head_end // 4)
    assert identity["omitted_range"] == [head_end, tail_start]
    assert payload(shown(model, 2), RANGE_PREFIX)["data"] == "🙂🙂"
    assert shown(model, 3) == "error: artifact range does not align to UTF-8 text"


def test_a_range_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("b" * 2_000)
    artifact = f"artifact-{sha(b'b' * 2_000)}"
    model, _, _ = run(
        tmp_path, read("big.txt"), read(range_path(artifact, 0, 1_001)), FINAL, inline=1_000
    )
    assert shown(model, 2) == "error: artifact range exceeds 500 bytes"


def test_an_artifact_this_conversation_was_not_shown_is_not_served(tmp_path: Path) -> None:
    secret = b"stored but never shown\n" * 100
    workspace = workspace_for(tmp_path)
    digest = workspace.receipt_store.keep_object(secret)
    path = range_path(f"artifact-{digest}", 0, 10)
    fake = tmp_path / path
    fake.parent.mkdir(parents=True)
    fake.write_text("a real file at the reserved path")
    model, _, _ = run(tmp_path, read(path), FINAL, workspace=workspace)
    assert shown(model, 1) == "error: artifact is not available in this store"


@pytest.mark.parametrize(
    "path",
    [".tool-artifacts/notes.txt", ".tool-artifacts/artifact-xyz/bytes/0-4"],
)
def test_a_malformed_reserved_path_never_reaches_a_real_file(tmp_path: Path, path: str) -> None:
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_text("real")
    model, _, _ = run(tmp_path, read(path), FINAL)
    assert shown(model, 1) == "error: artifact range path is malformed"


def test_a_tampered_artifact_is_refused_on_the_next_read(tmp_path: Path) -> None:
    text = "c" * 2_000
    (tmp_path / "big.txt").write_text(text)
    digest = sha(text.encode())
    path = range_path(f"artifact-{digest}", 0, 10)
    stored = log_path(tmp_path).parent / OBJECTS_FOLDER / digest

    asked: list[int] = []

    def should_stop() -> bool:  # asked before each model call: tamper before the third
        asked.append(1)
        if len(asked) == 3:
            os.chmod(stored, 0o644)
            stored.write_text("d" * 2_000)
        return False

    workspace = workspace_for(tmp_path)
    model = RecordingModel(read("big.txt"), read(path), read(path), FINAL)
    limits = AgentLimits(max_steps=4, max_inline_chars=1_000)
    run_agent("inspect", model, workspace, limits, should_stop=should_stop)
    assert payload(shown(model, 2), RANGE_PREFIX)["data"] == "c" * 10
    assert shown(model, 3) == "error: artifact digest does not match its recorded identity"


def test_without_a_budget_every_result_is_shown_whole(tmp_path: Path) -> None:
    model = RecordingModel({"tool": "run_command", "argv": list(NUMBERED)}, FINAL)
    workspace = workspace_for(tmp_path)
    run_agent("inspect", model, workspace, AgentLimits(max_steps=2, max_context_chars=10**7))
    assert shown(model, 1) == workspace.receipt_store.receipts()[-1].result


def test_the_prompt_tells_the_model_how_to_read_a_range(tmp_path: Path) -> None:
    prompt = build_system_prompt(workspace_for(tmp_path))
    assert "Tool result externalized" in prompt
    assert ".tool-artifacts/<artifact_id>/bytes/<start>-<end>" in prompt


def test_an_output_past_what_the_store_keeps_says_so(tmp_path: Path) -> None:
    policy = ToolPolicy(tmp_path, allowed_commands=(NUMBERED,), max_command_output_bytes=20_000)
    workspace = make_workspace(policy, answer=True, logged=True)
    model, _, _ = run(
        tmp_path, {"tool": "run_command", "argv": list(NUMBERED)}, FINAL, workspace=workspace
    )
    seen = shown(model, 1)
    assert seen.endswith("\n[only the first bytes of the output were kept]")
    assert (
        payload(seen.split("\n", 1)[1].rsplit("\n", 1)[0], EXTERNALIZED_PREFIX)["byte_count"]
        == 20_000
    )


def test_the_inline_budget_is_a_setting_of_at_least_512_characters() -> None:
    assert Settings().limits().max_inline_chars == 16_000
    assert Settings.from_mapping({"maxInlineChars": 4_096}).limits().max_inline_chars == 4_096
    with pytest.raises(SettingsError, match="maxInlineChars must be an integer from 512"):
        Settings.from_mapping({"maxInlineChars": 511})


def test_the_cli_trace_keeps_the_whole_result_of_an_externalized_read(
    tmp_path: Path,
) -> None:
    text = "".join(f"row {i:05}\n" for i in range(200))  # 2,000 characters
    (tmp_path / "big.txt").write_text(text)
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps(read("big.txt")) + "\n" + json.dumps(FINAL) + "\n")
    output = io.StringIO()
    args = ["agent", "look", "--root", str(tmp_path), "--model", f"scripted:{script}"]
    status = main([*args, "--max-inline-chars", "1000"], stdin=io.StringIO(""), stdout=output)
    assert status == 0
    assert "row 00199" in output.getvalue()  # the terminal's trace keeps the whole result


def test_a_follow_up_reads_ranges_of_what_earlier_turns_were_shown(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("e" * 2_000)
    path = range_path(f"artifact-{sha(b'e' * 2_000)}", 0, 5)
    messages: list[dict[str, str]] = []
    observations: list[Any] = []
    limits = AgentLimits(max_steps=3, max_inline_chars=1_000)
    kept = {"messages": messages, "observations": observations}
    run_agent(
        "look", RecordingModel(read("big.txt"), FINAL), workspace_for(tmp_path), limits, **kept
    )
    model = RecordingModel(read(path), FINAL)
    run_agent("and the start?", model, workspace_for(tmp_path), limits, **kept)
    assert payload(shown(model, 1), RANGE_PREFIX)["data"] == "eeeee"
    fresh = RecordingModel(read(path), FINAL)
    run_agent("the start?", fresh, workspace_for(tmp_path), limits)
    assert shown(fresh, 1) == "error: artifact is not available in this store"


PLANTED_ID = "artifact-" + "a" * 64


@pytest.mark.parametrize(
    "spelling",
    [
        f"./.tool-artifacts/{PLANTED_ID}/bytes/0-4",
        f".tool-artifacts//{PLANTED_ID}/bytes/0-4",
        f"./././.tool-artifacts/./{PLANTED_ID}/bytes/0-4",
        f".Tool-Artifacts/{PLANTED_ID}/bytes/0-4",
    ],
)
def test_every_spelling_of_the_reserved_path_is_an_artifact_read_never_a_real_file(
    tmp_path: Path, spelling: str
) -> None:
    planted = tmp_path / ".tool-artifacts" / PLANTED_ID / "bytes" / "0-4"
    planted.parent.mkdir(parents=True)
    planted.write_text("real")

    model, _, _ = run(tmp_path, read(spelling), FINAL)

    assert shown(model, 1) == "error: artifact is not available in this store"


@pytest.mark.parametrize(
    "action",
    [
        {"tool": "list_files", "path": "./.tool-artifacts"},
        {"tool": "search_files", "pattern": "real", "path": ".tool-artifacts/x"},
    ],
)
def test_no_tool_reaches_a_real_folder_at_the_reserved_path(
    tmp_path: Path, action: dict[str, Any]
) -> None:
    (tmp_path / ".tool-artifacts" / "x").mkdir(parents=True)
    (tmp_path / ".tool-artifacts" / "x" / "note.txt").write_text("real")

    model, _, _ = run(tmp_path, action, FINAL)

    assert shown(model, 1) == "error: path is not accessible"


@pytest.mark.parametrize("spelling", ["./.tool-artifacts/x", ".TOOL-ARTIFACTS", ".tool-artifacts/"])
def test_a_path_under_the_reserved_folder_is_refused_to_every_tool_that_writes(
    spelling: str,
) -> None:
    with pytest.raises(AgentError, match="path is not accessible"):
        relative_parts(spelling)
