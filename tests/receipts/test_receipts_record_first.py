"""Record first: an id and a writable log before any effect, and a loud stop if recording
still fails after it."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace, log_path, receipt, write

from counterfoil import AgentError, ReceiptStore, verify_receipt_log
from counterfoil.loop import run_agent
from counterfoil.receipts import logfile


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def _reserve_many(path: str, count: int, out: str) -> None:
    store = ReceiptStore(Path(path))
    ids = [store.reserve_call_id() for _ in range(count)]
    Path(out).write_text("\n".join(ids))


def test_two_stores_on_one_log_never_hand_out_the_same_id_from_threads(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    stores = [ReceiptStore(log), ReceiptStore(log)]
    ids: list[str] = []
    lock = threading.Lock()

    def reserve(store: ReceiptStore) -> None:
        for _ in range(40):
            item = store.reserve_call_id()
            with lock:
                ids.append(item)

    threads = [threading.Thread(target=reserve, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(ids) == 80 and len(set(ids)) == 80


def test_two_processes_on_one_log_never_hand_out_the_same_id(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    ReceiptStore(log).put(receipt(1))
    context = multiprocessing.get_context("spawn")
    outs = [tmp_path / "a.txt", tmp_path / "b.txt"]
    workers = [context.Process(target=_reserve_many, args=(str(log), 40, str(out))) for out in outs]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    ids = [line for out in outs for line in out.read_text().splitlines()]
    assert len(set(ids)) == 80 and "call-1" not in ids


def test_an_approved_effect_in_a_second_workspace_gets_a_fresh_id(tmp_path: Path) -> None:
    first, second = approving_workspace(tmp_path), approving_workspace(tmp_path)
    assert first.execute(write("a.md", "a\n")) == "wrote a.md"
    assert second.execute(write("b.md", "b\n")) == "wrote b.md"
    store = ReceiptStore(log_path(tmp_path))
    assert [item.tool_call_id for item in store.receipts()] == ["call-1", "call-2"]


def test_a_symlinked_log_is_refused_before_the_effect(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.jsonl"
    real.write_text("")
    workspace = approving_workspace(tmp_path)
    log = log_path(tmp_path)
    log.symlink_to(real)

    result = workspace.execute(write("a.md", "a\n"))
    assert result.startswith("error: ") and "symlink" in result
    assert not (tmp_path / "a.md").exists()
    with pytest.raises(AgentError, match="symlink"):
        ReceiptStore(log)


def test_a_fifo_at_the_log_path_is_an_error_not_a_hang(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    os.mkfifo(log)
    script = (
        "import sys\nfrom counterfoil import ReceiptStore, verify_receipt_log\n"
        "try:\n    ReceiptStore(sys.argv[1])\nexcept ValueError as e:\n    print('open:', e)\n"
        "print('verify:', verify_receipt_log(sys.argv[1]).error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(log)],
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    assert "open: could not load receipt log" in done.stdout
    assert "not a regular file" in done.stdout.splitlines()[1]


def test_a_log_folder_replaced_by_a_file_is_refused_before_the_effect(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)
    folder = log_path(tmp_path).parent
    for item in folder.iterdir():
        item.unlink()
    folder.rmdir()
    folder.write_text("not a folder")

    result = workspace.execute(write("a.md", "a\n"))
    assert result.startswith("error: ") and "not a directory" in result
    assert not (tmp_path / "a.md").exists()


def test_a_short_write_is_rolled_back_and_not_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = log_path(tmp_path)
    store = ReceiptStore(log)
    store.put(receipt(1))
    size = log.stat().st_size
    real_write = os.write

    def short_then_full_disk(fd: int, data: bytes) -> int:
        if len(data) > 20:
            return real_write(fd, data[:20])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(logfile.os, "write", short_then_full_disk)
    with pytest.raises(AgentError, match="could not write receipt: No space left"):
        store.put(receipt(2))
    monkeypatch.undo()

    assert log.stat().st_size == size
    assert len(store) == 1 and store.get("call-2") is None
    store.put(receipt(2))
    assert verify_receipt_log(log).count == 2


def test_a_lock_held_by_another_process_times_out_with_a_clear_error(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    ReceiptStore(log).put(receipt(1))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDONLY)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(30)"
            ),
            str(log.parent),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(AgentError, match="locked by another process"):
            ReceiptStore(log, lock_timeout=0.3).put(receipt(2))
    finally:
        holder.kill()
        holder.wait()
    ReceiptStore(log, lock_timeout=5).put(receipt(2))


def test_an_effect_whose_receipt_fails_says_so_and_stops_the_run(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)
    store = workspace.receipt_store

    def refuse(_: object) -> object:
        raise AgentError("disk full")

    store.put = refuse  # type: ignore[method-assign, assignment]
    responses = iter(['{"tool":"write_file","path":"a.md","content":"a\\n"}', '{"final":"done"}'])
    run = run_agent("write a.md", lambda _: next(responses), workspace)

    assert (tmp_path / "a.md").read_text() == "a\n"
    assert run.reason == "receipt_not_recorded" and not run.completed
    assert run.events[-1].result == "error: effect performed, receipt not recorded: disk full"
