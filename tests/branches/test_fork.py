"""`counterfoil fork`: one branch per steering text, each in its own copy of the root with a
receipt log that begins with the parent's, one model shared in turn, each ended with its
verdict (and a task package's checks when given), all recorded for `counterfoil branches`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.branches.fork_helpers import (
    READ,
    SteeredModel,
    cli,
    edit,
    finished_run,
    fork_script,
    log_of,
    model,
    write_script,
)

from counterfoil.branches.records import BranchStore
from counterfoil.model_state import ModelCheckpoint
from counterfoil.models.scripted import ScriptedModel
from counterfoil.receipts import ReceiptStore
from counterfoil.sessions.store import SessionStore


def branches_of(root: Path, run_id: str) -> BranchStore:
    return BranchStore(SessionStore(log_of(root)))


def fork(root: Path, run_id: str, script: Path, *steers: str, answers: str = "") -> str:
    arguments = ["fork", run_id, "--root", str(root), *model(script)]
    for steer in steers:
        arguments += ["--steer", steer]
    status, output = cli(arguments, answers)
    assert status == 0, output
    return output


def steered(monkeypatch: pytest.MonkeyPatch, steered_model: SteeredModel) -> None:
    """`--model` loads `steered_model` (the flags still name a script, which is not read)."""
    import counterfoil.models

    monkeypatch.setattr(counterfoil.models, "load_generate", lambda *_a, **_k: steered_model)


def test_each_steering_text_runs_in_its_own_copy_and_the_root_is_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, run_id = finished_run(tmp_path)
    steered(
        monkeypatch,
        SteeredModel({"three": [edit("3"), {"final": "3"}], "four": [edit("4"), {"final": "4"}]}),
    )

    fork(root, run_id, fork_script(tmp_path), "three", "four")

    store = branches_of(root, run_id)
    first, second = store.branches(run_id)
    assert [(item.name, item.steering) for item in (first, second)] == [
        (f"{run_id}.1", "three"),
        (f"{run_id}.2", "four"),
    ]
    assert (store.copy_root(first) / "app.py").read_text() == "answer = 3\n"
    assert (store.copy_root(second) / "app.py").read_text() == "answer = 4\n"
    assert (root / "app.py").read_text() == "answer = 2\n"


def test_each_branch_log_begins_byte_for_byte_with_the_parents(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)
    parent = log_of(root).read_bytes()

    fork(root, run_id, fork_script(tmp_path), "one way", "another way")

    store = branches_of(root, run_id)
    for record in store.branches(run_id):
        branch_log = store.copy_log(record).read_bytes()
        assert branch_log.startswith(parent) and len(branch_log) > len(parent)
        assert ReceiptStore(store.copy_log(record), signer=None).receipts()[-1].tool == "edit_file"
    assert log_of(root).read_bytes() == parent


def test_each_branch_ends_with_its_verdict_and_the_files_it_changed(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)

    output = fork(root, run_id, fork_script(tmp_path), "edit it")

    (record,) = branches_of(root, run_id).branches(run_id)
    assert (record.state, record.reason, record.steps) == ("ended", "completed", 2)
    assert record.effects["approved"] == 1 and record.validation == "not_run"
    assert record.files_changed == ("app.py",)
    assert record.final == "set to 3"
    assert f"== branch {run_id}.1 ended: completed ==" in output


def test_a_shared_prefix_is_reported_as_the_prefill_each_branch_avoided(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, run_id = finished_run(tmp_path)
    steering_model = SteeredModel({"a": [{"final": "a"}], "b": [{"final": "b"}]})
    steered(monkeypatch, steering_model)

    fork(root, run_id, fork_script(tmp_path), "a", "b")

    first, second = branches_of(root, run_id).branches(run_id)
    assert first.prefill_avoided == 0  # nothing was cached before the first branch
    assert second.prefix_tokens is not None and second.prefix_tokens > 0
    assert second.prefill_avoided == second.prefix_tokens  # the checkpoint, not prefilled again
    assert steering_model.stats[-1].prefilled_tokens == (
        steering_model.stats[-1].prompt_tokens - second.prefix_tokens
    )


def test_a_scripted_model_leaves_the_prefill_avoided_unknown_and_says_why(
    tmp_path: Path,
) -> None:
    root, run_id = finished_run(tmp_path)

    fork(root, run_id, fork_script(tmp_path), "edit it")

    (record,) = branches_of(root, run_id).branches(run_id)
    assert record.prefill_avoided is None
    assert record.prefill_note is not None and "no prompt counters" in record.prefill_note
    assert record.prefix_tokens is not None  # its estimate of the checkpoint's prompt


def test_a_write_in_a_branch_is_approved_in_its_copy_and_a_command_is_asked(
    tmp_path: Path,
) -> None:
    root, run_id = finished_run(tmp_path)
    echo = ["python3", "-c", "print(1)"]
    script = tmp_path / "command.jsonl"
    script.write_text(
        "\n".join(
            json.dumps(item)
            for item in (
                READ,
                edit("2", "1"),
                edit("3"),
                {"tool": "run_command", "argv": echo},
                {"final": "ok"},
            )
        )
    )
    arguments = ["fork", run_id, "--root", str(root), *model(script), "--steer", "go"]

    status, output = cli([*arguments, "--allow-command", " ".join(echo)], "n\n")

    assert status == 0, output
    assert "Approve? [y/N] denied" in output
    store = branches_of(root, run_id)
    (record,) = store.branches(run_id)
    receipts = ReceiptStore(store.copy_log(record), signer=None).receipts()
    assert receipts[-1].tool == "edit_file"
    assert receipts[-1].evidence.approval.via == f"fork, in branch {run_id}.1's own copy"
    assert record.effects["rejected"] == 1


def test_the_listing_says_name_steering_steps_verdict_files_prefill_and_state(
    tmp_path: Path,
) -> None:
    root, run_id = finished_run(tmp_path)
    fork(root, run_id, fork_script(tmp_path), "edit it")

    status, text = cli(["branches", run_id, "--root", str(root)])
    _, document = cli(["branches", run_id, "--root", str(root), "--json"])

    assert status == 0
    assert text.splitlines() == [
        (
            f"{run_id}.1  ended     2 steps  validation: not_run  effects: 1 approved  "
            "changed: app.py  prefill avoided: unknown (the model reports no prompt counters)"
        ),
        "  steer: edit it",
    ]
    (listed,) = json.loads(document)["branches"]
    assert {key: listed[key] for key in ("name", "steering", "state", "steps")} == {
        "name": f"{run_id}.1",
        "steering": "edit it",
        "state": "ended",
        "steps": 2,
    }
    assert listed["filesChanged"] == ["app.py"] and listed["prefillAvoided"] is None


def test_a_branch_whose_fork_was_stopped_lists_as_interrupted(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)
    fork(root, run_id, fork_script(tmp_path), "edit it")
    store = branches_of(root, run_id)
    (record,) = store.branches(run_id)
    store.write(record.updated_with(state="running"))  # as a killed fork leaves it

    _, document = cli(["branches", run_id, "--root", str(root), "--json"])

    assert json.loads(document)["branches"][0]["state"] == "interrupted"


def test_a_task_packages_checks_grade_each_branch(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)
    package = tmp_path / "package"
    (package / "workspace").mkdir(parents=True)
    (package / "workspace" / "app.py").write_text("answer = 2\n")
    (package / "held_out_tests").mkdir()
    task = {
        "schema_version": 1,
        "id": "answer",
        "prompt": "set the answer",
        "max_steps": 4,
        "editable_paths": ["app.py"],
    }
    (package / "task.json").write_text(json.dumps(task))
    check = {
        "name": "answer is 4",
        "type": "text_equals",
        "path": "app.py",
        "expected": "answer = 4\n",
    }
    (package / "held_out_tests" / "checks.json").write_text(
        json.dumps({"schema_version": 1, "checks": [check]})
    )
    arguments = ["fork", run_id, "--root", str(root), *model(fork_script(tmp_path))]

    status, output = cli([*arguments, "--steer", "edit it", "--checks", str(package)])

    assert status == 0, output
    (record,) = branches_of(root, run_id).branches(run_id)
    assert record.checks_passed is False
    assert [(item.name, item.passed) for item in record.checks] == [("answer is 4", False)]
    assert "checks: failed (0/1)" in output


def test_a_copy_holds_the_root_but_not_the_receipt_logs_folder(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").write_text("kept\n")

    output = fork(root, run_id, fork_script(tmp_path), "edit it")

    store = branches_of(root, run_id)
    (record,) = store.branches(run_id)
    copy = store.copy_root(record)
    assert (copy / "docs" / "notes.md").read_text() == "kept\n"
    assert not (copy / ".counterfoil").exists()  # no log, no sessions, no branches
    assert record.cloned_files + record.copied_files == 2
    assert f"copy of the root: {copy} (" in output


class CachingScript(ScriptedModel):
    """A scripted model whose state includes a KV cache it writes beside the checkpoint and
    reads back (as an mlx-lm model does), noting each read."""

    def __init__(self, path: Path) -> None:
        super().__init__(path.read_text().splitlines(), source=str(path))
        self.reads: list[tuple[int, ...]] = []

    def save_checkpoint(self, messages: list[dict[str, str]]) -> ModelCheckpoint:
        return ModelCheckpoint(len(messages), self._next, (1, 2, 3), (3,))

    def prompt_cache_bytes(self) -> int:
        return 3

    def write_prompt_cache(self, path: str) -> None:
        Path(path).write_bytes(b"kv!")

    def read_prompt_cache(self, path: str, tokens: Sequence[int]) -> None:
        assert Path(path).read_bytes() == b"kv!"
        self.reads.append(tuple(tokens))


def test_the_first_branch_reads_the_kv_cache_kept_with_the_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import counterfoil.models

    parent = CachingScript(write_script(tmp_path / "p.jsonl", READ, {"final": "read"}))
    forker = CachingScript(write_script(tmp_path / "f.jsonl", READ, {"final": "a"}, {"final": "b"}))
    models = iter([parent, forker])
    monkeypatch.setattr(counterfoil.models, "load_generate", lambda *_a, **_k: next(models))
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("answer = 1\n")
    cli(["agent", "read it", "--root", str(root), *model(tmp_path / "p.jsonl")])
    (run_id,) = SessionStore(log_of(root)).run_ids()
    output = fork(root, run_id, tmp_path / "f.jsonl", "a", "b")

    assert forker.reads == [(1, 2, 3)]  # the second branch reuses it in memory
    assert output.count("prompt cache: 3 tokens restored") == 1


def test_prefill_avoided_never_reads_as_more_than_what_was_shared() -> None:
    from counterfoil.cli.branches import prefill_text

    assert prefill_text(549, 545) == (
        "549 tokens: the shared conversation's 545 and 4 of the next message's template"
    )
    assert prefill_text(500, 545) == "500 of the shared conversation's 545 tokens"
    assert prefill_text(12, None) == "12 tokens"
