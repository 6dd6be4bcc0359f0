"""Discarding an interrupted or paused run: closed for good, said so, listed as discarded,
never offered again, and nothing it did undone."""

from __future__ import annotations

import io
import json
from pathlib import Path

from sweep_helpers import agent_flags, make_project

from counterfoil.cli.main import main
from counterfoil.sessions.decisions import DECISIONS_FILE, read_entries, verify_decisions
from counterfoil.sessions.store import SessionStore


def _log(folder: Path) -> Path:
    return folder / "project" / ".counterfoil" / "receipts.jsonl"


class _CtrlC(io.StringIO):
    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        raise KeyboardInterrupt


def _paused_run(folder: Path) -> str:
    """A run paused at its first approval (the edit's), as Ctrl-C leaves it."""
    make_project(folder)
    main(["agent", "fix app.py", *agent_flags(folder)], stdin=_CtrlC(), stdout=io.StringIO())
    (run_id,) = SessionStore(_log(folder)).run_ids()
    return run_id


def _cli(folder: Path, *arguments: str) -> tuple[int, str]:
    out = io.StringIO()
    status = main([*arguments, "--root", str(folder / "project")], stdout=out)
    return status, out.getvalue()


def test_discard_says_what_it_did_and_what_it_left(tmp_path: Path) -> None:
    run_id = _paused_run(tmp_path)

    status, output = _cli(tmp_path, "sessions", "discard", run_id)

    assert status == 0
    assert output == (
        f"discarded run {run_id} (goal: fix app.py): it will not be offered to resume; its open "
        "proposal (edit_file app.py) will not be asked; the files it changed stay as they are\n"
    )


def test_a_discarded_run_is_listed_as_discarded(tmp_path: Path) -> None:
    run_id = _paused_run(tmp_path)
    _cli(tmp_path, "sessions", "discard", run_id)

    _status, listing = _cli(tmp_path, "sessions")

    assert listing.startswith(f"{run_id}  discarded ")


def test_a_discarded_run_is_not_offered_to_resume(tmp_path: Path) -> None:
    run_id = _paused_run(tmp_path)
    _cli(tmp_path, "sessions", "discard", run_id)

    status, output = _cli(tmp_path, "resume", *agent_flags(tmp_path)[2:])

    assert status == 2
    assert "nothing to resume" in output


def test_the_runs_record_ends_discarded_and_still_verifies(tmp_path: Path) -> None:
    run_id = _paused_run(tmp_path)
    _cli(tmp_path, "sessions", "discard", run_id)

    path = SessionStore(_log(tmp_path)).run_folder(run_id) / DECISIONS_FILE
    last = read_entries(path)[-1]

    assert (last["kind"], last["reason"]) == ("ended", "discarded")
    assert verify_decisions(path)[1] is None


def test_a_run_discarded_already_is_refused_in_one_sentence(tmp_path: Path) -> None:
    run_id = _paused_run(tmp_path)
    _cli(tmp_path, "sessions", "discard", run_id)

    status, output = _cli(tmp_path, "sessions", "discard", run_id)

    assert status == 2
    assert output == f"error: run {run_id} was already discarded; there is nothing to discard\n"


def test_a_run_held_by_a_process_is_not_discarded(tmp_path: Path) -> None:
    run_id = _paused_run(tmp_path)
    sessions = SessionStore(_log(tmp_path))

    with sessions.lock(run_id):
        status, output = _cli(tmp_path, "sessions", "discard", run_id)

    assert status == 2
    assert output == (
        f"error: run {run_id} is already running or being resumed by another process\n"
    )
    assert sessions.load(run_id).state == "paused"


def test_an_unknown_run_is_refused_in_one_sentence(tmp_path: Path) -> None:
    _paused_run(tmp_path)

    status, output = _cli(tmp_path, "sessions", "discard", "no-such-run")

    assert status == 2
    assert output == f"error: there is no run no-such-run in {tmp_path / 'project'}\n"


def test_the_listing_in_json_terms_reads_discarded(tmp_path: Path) -> None:
    from counterfoil.lsp.kept_runs.sessions_served import list_sessions
    from counterfoil.protocol import wire

    run_id = _paused_run(tmp_path)
    _cli(tmp_path, "sessions", "discard", run_id)

    (session,) = wire(list_sessions(_log(tmp_path)))["sessions"]

    assert (session["runId"], session["state"]) == (run_id, "discarded")
    assert json.dumps(session)
