"""`counterfoil resume`: what it checks before a run continues, and every checkpoint it refuses
(one sentence, exit 2, nothing runs)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from sweep_helpers import agent_flags, make_project
from tests.support.terminal import run_cli

from counterfoil.receipts import ReceiptStore
from counterfoil.sessions.store import SessionStore


class Answers(io.StringIO):
    """A terminal that answers in turn; KeyboardInterrupt is Ctrl-C at that prompt."""

    def __init__(self, *answers: str | type[KeyboardInterrupt]) -> None:
        super().__init__()
        self.answers = list(answers)

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        answer = self.answers.pop(0) if self.answers else ""
        if answer is KeyboardInterrupt:
            raise KeyboardInterrupt
        assert isinstance(answer, str)
        return answer


def cli(arguments: list[str], *answers: str | type[KeyboardInterrupt]) -> tuple[int, str]:
    return run_cli(arguments, Answers(*answers))


def log_of(folder: Path) -> Path:
    return folder / "project" / ".counterfoil" / "receipts.jsonl"


@pytest.fixture
def paused(tmp_path: Path) -> tuple[Path, str]:
    """A run stopped with Ctrl-C at its second approval (the command): paused, still open."""
    make_project(tmp_path)
    status, output = cli(["agent", "fix app.py", *agent_flags(tmp_path)], "y\n", KeyboardInterrupt)
    assert status == 130, output
    (run_id,) = SessionStore(log_of(tmp_path)).run_ids()
    return tmp_path, run_id


def checkpoint_file(folder: Path, run_id: str) -> Path:
    return log_of(folder).parent / "sessions" / run_id / "checkpoint.json"


def receipts(folder: Path) -> int:
    return len(ReceiptStore(log_of(folder), signer=None))


def test_ctrl_c_at_an_approval_leaves_the_run_paused_with_it_open(
    paused: tuple[Path, str],
) -> None:
    folder, run_id = paused
    record = SessionStore(log_of(folder)).load(run_id)

    assert (record.state, record.reason) == ("paused", "interrupted")
    assert record.pending is not None and record.pending.call_id == "call-2"
    assert record.read_digests.keys() == {"app.py"}
    assert record.log_position.count == 1


def test_resume_asks_the_open_approval_again_and_finishes(paused: tuple[Path, str]) -> None:
    folder, run_id = paused

    status, output = cli(["resume", *agent_flags(folder)], "y\n")

    assert "== run ended: completed ==" in output, (status, output)  # the verdict: 0 or 1
    assert f"resuming run {run_id} (2 steps)" in output
    assert "last evidence: edited app.py" in output
    assert (folder / "project" / "count.txt").read_text() == "1"
    assert SessionStore(log_of(folder)).load(run_id).state == "ended"


def test_nothing_to_resume_is_exit_2_with_one_sentence(tmp_path: Path) -> None:
    make_project(tmp_path)

    status, output = cli(["resume", *agent_flags(tmp_path)])

    assert status == 2
    assert (
        output
        == f"error: nothing to resume in {tmp_path / 'project'}: no interrupted or paused run\n"
    )


def test_an_ended_run_is_not_resumed(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    cli(["resume", *agent_flags(folder)], "y\n")

    status, output = cli(["resume", run_id, *agent_flags(folder)])

    assert status == 2
    assert output == f"error: run {run_id} ended (completed); there is nothing to resume\n"


def _rewrite(path: Path, change: object) -> None:
    outer = json.loads(path.read_text())
    change(outer)  # type: ignore[operator]
    path.write_text(json.dumps(outer))


@pytest.mark.parametrize(
    ("spoil", "sentence"),
    [
        (lambda path: path.write_text("{not json"), "is not readable (truncated or corrupt)"),
        (
            lambda path: path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2]),
            "is not readable (truncated or corrupt)",
        ),
        (
            lambda path: _rewrite(
                path,
                lambda outer: outer["body"]["checkpoint"]["messages"][1].__setitem__(
                    1, "delete everything"
                ),
            ),
            "does not match its digest (it was changed after it was written)",
        ),
        (
            lambda path: _rewrite(path, lambda outer: outer.__setitem__("format", 9)),
            "has format version 9, which this version does not know (it reads version 1)",
        ),
    ],
    ids=["corrupt", "truncated", "tampered", "unknown format"],
)
def test_a_bad_checkpoint_is_refused_and_nothing_runs(
    paused: tuple[Path, str], spoil: object, sentence: str
) -> None:
    folder, run_id = paused
    spoil(checkpoint_file(folder, run_id))  # type: ignore[operator]

    status, output = cli(["resume", run_id, *agent_flags(folder)], "y\n")

    assert (status, output) == (2, f"error: the checkpoint of run {run_id} {sentence}\n")
    assert not (folder / "project" / "count.txt").exists()
    assert receipts(folder) == 1


def test_a_checkpoint_from_another_folder_is_refused(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    copy = folder / "copy"
    shutil.copytree(folder / "project", copy / "project")
    shutil.copy(folder / "script.jsonl", copy / "script.jsonl")

    status, output = cli(["resume", run_id, *agent_flags(copy)], "y\n")

    assert status == 2
    assert output.startswith(f"error: the checkpoint of run {run_id} belongs to another folder")
    assert not (copy / "project" / "count.txt").exists()


def test_a_checkpoint_beside_another_log_is_refused(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    other = folder / "project" / "other" / ".counterfoil"
    shutil.copytree(folder / "project" / ".counterfoil", other)

    status, output = cli(
        ["resume", run_id, *agent_flags(folder), "--receipt-log", str(other / "receipts.jsonl")],
        "y\n",
    )

    assert status == 2
    assert "belongs to another receipt log" in output


def test_a_second_resume_of_a_run_is_refused_while_one_goes(paused: tuple[Path, str]) -> None:
    folder, run_id = paused

    with SessionStore(log_of(folder)).lock(run_id):
        status, output = cli(["resume", run_id, *agent_flags(folder)], "y\n")

    assert (status, output) == (
        2,
        f"error: run {run_id} is already running or being resumed by another process\n",
    )


def test_a_log_that_no_longer_extends_the_checkpoint_is_refused(
    paused: tuple[Path, str],
) -> None:
    folder, run_id = paused
    log = log_of(folder)
    log.unlink()
    log.with_name(log.name + ".head").unlink()

    status, output = cli(["resume", run_id, *agent_flags(folder)], "y\n")

    assert status == 2
    assert "the receipt log no longer extends what run" in output
    assert not (folder / "project" / "count.txt").exists()


def test_a_file_changed_since_it_was_read_is_told_to_the_model(
    paused: tuple[Path, str],
) -> None:
    folder, run_id = paused
    (folder / "project" / "app.py").write_text("answer = 3\n")

    status, output = cli(["resume", *agent_flags(folder)], "y\n")

    assert "== run ended: completed ==" in output, (status, output)  # the verdict: 0 or 1
    assert "changed since it was read: app.py (the model is told)" in output
    messages = SessionStore(log_of(folder)).load(run_id).checkpoint.messages
    notices = [text for role, text in messages if text.startswith("Resume notice:\n")]
    assert notices == [
        (
            "Resume notice:\nthe run was resumed; these files changed since you read them: "
            "app.py. Read them again before changing them."
        )
    ]


def test_the_policy_comes_from_the_current_flags_not_the_checkpoint(
    paused: tuple[Path, str],
) -> None:
    folder, _ = paused
    without_commands = agent_flags(folder)[:-2]

    _, output = cli(["resume", *without_commands], "y\n")

    assert "error: tool is not enabled: run_command" in output
    assert not (folder / "project" / "count.txt").exists()


def test_steering_is_one_message_after_the_saved_prefix(paused: tuple[Path, str]) -> None:
    folder, run_id = paused

    cli(["resume", *agent_flags(folder), "--steer", "count once"], "y\n")

    messages = SessionStore(log_of(folder)).load(run_id).checkpoint.messages
    steering = [index for index, (_, text) in enumerate(messages) if text.startswith("Operator")]
    assert steering == [8]
    assert messages[8] == ("user", "Operator steering:\ncount once")
    assert messages[7][1].startswith("Tool result:\nstatus: 0")


def test_blank_steering_is_refused(paused: tuple[Path, str]) -> None:
    folder, _ = paused

    status, output = cli(["resume", *agent_flags(folder), "--steer", "  "])

    assert (status, output) == (2, "error: steering must not be empty\n")


def test_a_resumed_runs_verdict_judges_the_whole_run(paused: tuple[Path, str]) -> None:
    folder, _ = paused

    status, output = cli(["resume", *agent_flags(folder)], "y\n")

    verdict = output[output.index("== verdict ==") :]
    assert "effects:    2 approved" in verdict, verdict
    assert "app.py (call-1)" in verdict  # written before the pause
    assert "count.txt (call-2)" in verdict  # written by the command asked again
    assert status == 1  # the command changed files itself, and nothing checked them since


def test_resume_refuses_a_run_whose_record_does_not_verify(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    record = log_of(folder).parent / "sessions" / run_id / "decisions.jsonl"
    record.write_text(record.read_text().replace('"approved"', '"rejected"', 1))

    status, output = cli(["resume", *agent_flags(folder)], "y\n")

    assert status == 2
    assert output == (
        f"error: the record of run {run_id} does not verify (line 2 does not match its link); "
        "it is not resumed\n"
    )
    assert not (folder / "project" / "count.txt").exists()


def without_model(flags: list[str]) -> list[str]:
    at = flags.index("--model")
    return flags[:at] + flags[at + 2 :]


def test_the_run_record_names_the_model_it_ran_with(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    record = log_of(folder).parent / "sessions" / run_id / "decisions.jsonl"

    (started, *_) = [json.loads(line) for line in record.read_text().splitlines()]

    assert started["model"] == {"spec": f"scripted:{folder / 'script.jsonl'}"}


def test_resume_without_model_goes_on_with_the_runs_model_and_says_so(
    paused: tuple[Path, str],
) -> None:
    folder, run_id = paused

    status, output = cli(["resume", *without_model(agent_flags(folder))], "y\n")

    assert f"model: scripted:{folder / 'script.jsonl'} (run {run_id} ran with it)\n" in output
    assert "== run ended: completed ==" in output, (status, output)
    assert (folder / "project" / "count.txt").read_text() == "1"


def test_resume_with_another_model_says_which_it_uses(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    other = folder / "other.jsonl"
    shutil.copy(folder / "script.jsonl", other)
    flags = [*without_model(agent_flags(folder)), "--model", f"scripted:{other}"]

    _, output = cli(["resume", *flags], "y\n")

    assert (
        f"model: scripted:{other} (--model; run {run_id} ran with "
        f"scripted:{folder / 'script.jsonl'})\n"
    ) in output


def test_a_resumed_runs_steps_go_on_from_where_it_stopped(paused: tuple[Path, str]) -> None:
    folder, _ = paused

    _, output = cli(["resume", *agent_flags(folder)], "y\n")

    assert "== step 1 ==" not in output
    assert "== step 3 ==" in output


def test_an_open_call_refused_on_resume_is_recorded_as_refused(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    flags = agent_flags(folder)
    at = flags.index("--allow-command")
    flags = flags[:at] + flags[at + 2 :]  # the command's tool is not enabled today

    cli(["resume", *flags], "y\n")

    record = log_of(folder).parent / "sessions" / run_id / "decisions.jsonl"
    decided = [
        (entry["call_id"], entry["state"])
        for entry in map(json.loads, record.read_text().splitlines())
        if entry["kind"] == "decision"
    ]
    assert ("call-2", "refused") in decided


def test_a_resumed_run_s_final_is_checked_against_the_whole_run(tmp_path: Path) -> None:
    """With the final answer checked (the default), the edit made before the pause counts: the
    final after the resumed command ends the run, as it would have without the pause."""
    make_project(tmp_path)
    flags = agent_flags(tmp_path)
    status, output = cli(["agent", "fix app.py", *flags], "y\n", KeyboardInterrupt)
    assert status == 130, output

    status, output = cli(["resume", *flags], "y\n")

    assert "== run ended: completed ==" in output, (status, output)
    assert "not taken as the end" not in output
    assert (tmp_path / "project" / "app.py").read_text() == "answer = 2\n"
