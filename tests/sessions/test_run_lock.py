"""One run, one lock: a copied run folder is not a second run, and a listing that looks at
a run's lock does not make a resume started at that moment fail."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from sweep_helpers import agent_flags
from test_resume_checks import cli, log_of, paused  # noqa: F401 - the fixture

from counterfoil.sessions import store
from counterfoil.sessions.store import SessionStore


def test_a_copy_of_a_run_folder_is_refused_and_the_command_runs_once(
    paused: tuple[Path, str],  # noqa: F811
) -> None:
    folder, run_id = paused
    sessions = log_of(folder).parent / "sessions"
    shutil.copytree(sessions / run_id, sessions / "copy")

    status, output = cli(["resume", "copy", *agent_flags(folder)], "y\n")

    assert status == 2
    assert output.endswith(
        f"error: the checkpoint in the folder of run copy is of run {run_id} (a copy); "
        "it is not resumed\n"
    )
    assert not (folder / "project" / "count.txt").exists()


def test_a_resume_started_while_a_listing_looks_at_the_lock_goes_on(
    paused: tuple[Path, str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder, run_id = paused
    monkeypatch.setattr(store, "LISTING_GRACE_SECONDS", 5.0)  # the release below, even if late
    lock = SessionStore(log_of(folder)).run_folder(run_id) / "lock"
    fd = os.open(lock, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # what a listing holds for an instant
    threading.Thread(target=lambda: (time.sleep(0.2), os.close(fd))).start()

    status, output = cli(["resume", run_id, *agent_flags(folder)], "y\n")

    assert "== run ended: completed ==" in output, (status, output)


def test_listing_runs_makes_no_lock_file(tmp_path: Path) -> None:
    sessions = SessionStore(tmp_path / ".counterfoil" / "receipts.jsonl")
    (sessions.folder / "run-1").mkdir(parents=True)

    assert sessions.is_live("run-1") is False
    assert not (sessions.folder / "run-1" / "lock").exists()


def test_a_run_being_resumed_lists_as_live(tmp_path: Path) -> None:
    sessions = SessionStore(tmp_path / ".counterfoil" / "receipts.jsonl")
    (tmp_path / ".counterfoil").mkdir()

    with sessions.lock("run-1"):
        assert sessions.is_live("run-1") is True
    assert sessions.is_live("run-1") is False


def test_a_symlinked_checkpoint_is_one_sentence_in_the_listing_and_resume(
    paused: tuple[Path, str],  # noqa: F811
) -> None:
    folder, run_id = paused
    checkpoint = log_of(folder).parent / "sessions" / run_id / "checkpoint.json"
    checkpoint.rename(folder / "elsewhere.json")
    checkpoint.symlink_to(folder / "elsewhere.json")
    sentence = f"checkpoint.json of run {run_id} is not a checkpoint file (a symlink)"

    listed = cli(["sessions", "--root", str(folder / "project")])
    resumed = cli(["resume", run_id, *agent_flags(folder)], "y\n")

    assert listed[0] == 0 and sentence in listed[1]
    assert resumed == (2, f"error: {sentence}\n")
