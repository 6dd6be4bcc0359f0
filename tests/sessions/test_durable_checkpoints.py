"""A terminal run's checkpoint on disk: written at each complete observation and at each open
approval, atomically, with what a resume must re-check; listed and collected by `sessions`."""

from __future__ import annotations

import io
import json
from pathlib import Path

from sweep_helpers import agent_flags, make_project

from counterfoil.cli.main import main
from counterfoil.sessions.store import SessionStore


def log_of(folder: Path) -> Path:
    return folder / "project" / ".counterfoil" / "receipts.jsonl"


def run(folder: Path, answers: str = "y\ny\n", command: str = "agent") -> str:
    out = io.StringIO()
    arguments = [command, "fix app.py"] if command == "agent" else [command]
    main([*arguments, *agent_flags(folder)], stdin=io.StringIO(answers), stdout=out)
    return out.getvalue()


def test_each_boundary_and_each_open_approval_is_written(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    make_project(tmp_path)
    written: list[tuple[int, str | None, int]] = []
    real_write = SessionStore.write

    def spy(self: SessionStore, record) -> None:  # type: ignore[no-untyped-def]
        pending = None if record.pending is None else record.pending.call_id
        written.append((len(record.checkpoint.messages), pending, record.log_position.count))
        real_write(self, record)

    monkeypatch.setattr(SessionStore, "write", spy)

    run(tmp_path)

    assert written == [
        (2, None, 0),  # the goal, before the first step
        (4, None, 0),  # after read_file
        (4, "call-1", 0),  # the edit's approval open
        (6, None, 1),  # after the edit and its receipt
        (6, "call-2", 1),  # the command's approval open
        (8, None, 2),  # after the command
        (8, None, 2),  # the end: ended
    ]


def test_the_checkpoint_holds_what_a_resume_re_checks(tmp_path: Path) -> None:
    make_project(tmp_path)
    run(tmp_path)
    sessions = SessionStore(log_of(tmp_path))
    (run_id,) = sessions.run_ids()

    record = sessions.load(run_id)

    assert (record.state, record.reason) == ("ended", "completed")
    assert record.checkpoint.task == "fix app.py"
    assert record.root == str((tmp_path / "project").resolve())
    assert record.log == str(log_of(tmp_path))
    assert record.read_digests.keys() == {"app.py"}
    assert record.checkpoint.model.response_index == 3  # the scripted model's next response
    assert [item.index for item in record.observations] == [3, 5, 7]
    head = json.loads(log_of(tmp_path).with_name("receipts.jsonl.head").read_text())
    assert (record.log_position.count, record.log_position.link) == (2, head["link"])


def test_no_temporary_file_is_left_beside_a_checkpoint(tmp_path: Path) -> None:
    make_project(tmp_path)
    run(tmp_path)

    names = {path.name for path in (log_of(tmp_path).parent / "sessions").rglob("*")}

    assert not [name for name in names if name.endswith(".tmp")]
    assert {"checkpoint.json", "lock", "intents", "call-1.json", "call-2.json"} <= names


def test_the_listing_says_each_runs_state_steps_last_action_and_goal(tmp_path: Path) -> None:
    make_project(tmp_path)
    run(tmp_path)
    (run_id,) = SessionStore(log_of(tmp_path)).run_ids()
    out = io.StringIO()

    main(["sessions", "--root", str(tmp_path / "project")], stdout=out)

    line = out.getvalue()
    assert line.startswith(f"{run_id}  ended ")
    assert '4 steps  last: {"argv":["python3","-c",' in line  # 3 actions, the final answer
    assert line.rstrip().endswith("goal: fix app.py")


def test_sessions_gc_removes_ended_runs_and_keeps_resumable_ones(tmp_path: Path) -> None:
    make_project(tmp_path)
    run(tmp_path)
    ended = SessionStore(log_of(tmp_path)).run_ids()
    (tmp_path / "project" / "app.py").write_text("answer = 1\n")
    run(tmp_path, answers="")  # the edit denied: the run goes on, then ends
    paused_out = io.StringIO()

    class CtrlC(io.StringIO):
        def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
            raise KeyboardInterrupt

    main(["agent", "fix app.py", *agent_flags(tmp_path)], stdin=CtrlC(), stdout=paused_out)
    runs = SessionStore(log_of(tmp_path)).run_ids()
    out = io.StringIO()

    main(["sessions", "gc", "--root", str(tmp_path / "project")], stdout=out)

    assert out.getvalue() == (
        "removed the checkpoints and caches of 2 ended runs (their records stay); 1 kept\n"
    )
    (kept,) = [run.run_id for run in SessionStore(log_of(tmp_path)).runs()]
    assert kept in runs and kept not in ended
    assert SessionStore(log_of(tmp_path)).load(kept).state == "paused"


def test_the_next_run_settles_what_an_interrupted_one_left(tmp_path: Path) -> None:
    make_project(tmp_path)

    from counterfoil.sessions.recorder import SessionRecorder

    real = SessionRecorder.write_intent

    def write_then_die(self, proposal, approval):  # type: ignore[no-untyped-def]
        real(self, proposal, approval)
        (tmp_path / "project" / "app.py").write_text("answer = 2\n")  # the write, then death
        self.lock.release()
        raise KeyboardInterrupt

    SessionRecorder.write_intent = write_then_die  # type: ignore[method-assign]
    try:
        run(tmp_path)
    finally:
        SessionRecorder.write_intent = real  # type: ignore[method-assign]

    output = run(tmp_path, answers="")

    assert (
        "recovered: call-1 (edit_file app.py) was performed before the interruption: "
        "recorded as recovered\n"
    ) in output


def test_a_completed_run_counts_its_final_answer_among_its_steps(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    script = tmp_path / "three.jsonl"
    script.write_text(
        '{"tool":"list_files"}\n{"tool":"read_file","path":"a.py"}\n{"final":"done"}\n'
    )
    main(["agent", "look", "--root", str(tmp_path), "--model", f"scripted:{script}"],
         stdout=io.StringIO())  # fmt: skip
    out = io.StringIO()

    main(["sessions", "--root", str(tmp_path)], stdout=out)

    assert "  3 steps  " in out.getvalue()
