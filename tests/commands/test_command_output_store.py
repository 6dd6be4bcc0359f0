"""A command's full output (up to the cap) is streamed into the content store as it runs:
named by its digest, fsynced before it is named, stored once, never through a symlink, and
nothing left behind when it cannot be stored. The model still sees only the first characters."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import sys
import tracemalloc
from pathlib import Path

import pytest
from tests.support.receipts import log_path
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace
from counterfoil.cli.main import main
from counterfoil.commands.runner import OUTPUT_LIMIT_CHARS
from counterfoil.errors import AgentError
from counterfoil.receipts import content
from counterfoil.receipts.content import OUTPUT_LIMIT_BYTES, ObjectStream, store_object
from counterfoil.settings.table import Settings, SettingsError

PYTHON = sys.executable
LINES = 20_000
NUMBERED = (PYTHON, "-c", f"import sys\nfor i in range({LINES}):\n    print(f'line {{i}}')")
NUMBERED_BYTES = "".join(f"line {i}\n" for i in range(LINES)).encode()


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def printing(size: int) -> tuple[str, ...]:
    return (PYTHON, "-c", f"import sys\nsys.stdout.write('x' * {size})")


def workspace_for(
    root: Path, argv: tuple[str, ...], store: ReceiptStore | None = None, **policy: object
) -> Workspace:
    rules = ToolPolicy(root, allowed_commands=(argv,), **policy)  # type: ignore[arg-type]
    store = store if store is not None else ReceiptStore(log_path(root))
    return make_workspace(rules, store=store, answer=True)


def run(workspace: Workspace, argv: tuple[str, ...]) -> str:
    return workspace.execute(ToolAction("run_command", {"argv": list(argv)}))


def last_line(root: Path) -> dict[str, object]:
    return json.loads(log_path(root).read_text().splitlines()[-1])  # type: ignore[no-any-return]


def objects_of(root: Path) -> list[str]:
    return sorted(os.listdir(log_path(root).parent / "objects"))


def test_the_full_output_is_stored_beyond_the_observation_which_says_where(tmp_path: Path) -> None:
    observation = run(workspace_for(tmp_path, NUMBERED), NUMBERED)

    assert len(NUMBERED_BYTES) > OUTPUT_LIMIT_CHARS
    assert (
        "more characters of output are not shown here; the whole output is kept with the receipt]"
        in observation
    )
    assert f"line {LINES - 1}" not in observation
    line = last_line(tmp_path)
    assert line["output_sha256"] == sha(NUMBERED_BYTES) and line["output_truncated"] is False
    stored = log_path(tmp_path).parent / "objects" / sha(NUMBERED_BYTES)
    assert stored.read_bytes() == NUMBERED_BYTES


def test_receipts_show_output_prints_the_stored_full_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(workspace_for(tmp_path, NUMBERED), NUMBERED)

    assert main(["receipts", "show", "--output", str(log_path(tmp_path))]) == 0
    shown = capsys.readouterr().out
    assert f"    line {LINES - 1}\n" in shown
    assert shown.count("    line ") == LINES
    assert "(output was truncated)" not in shown


def test_output_beyond_the_cap_is_cut_there_and_flagged(tmp_path: Path) -> None:
    argv = printing(5000)
    run(workspace_for(tmp_path, argv, max_command_output_bytes=1000), argv)

    line = last_line(tmp_path)
    assert line["output_sha256"] == sha(b"x" * 1000) and line["output_truncated"] is True
    assert objects_of(tmp_path) == [sha(b"x" * 1000)]


def test_output_exactly_at_the_cap_is_not_truncated(tmp_path: Path) -> None:
    argv = printing(1000)
    run(workspace_for(tmp_path, argv, max_command_output_bytes=1000), argv)

    line = last_line(tmp_path)
    assert line["output_sha256"] == sha(b"x" * 1000) and line["output_truncated"] is False


def test_100_mb_of_output_keeps_the_first_10_mb_without_holding_it(tmp_path: Path) -> None:
    argv = (PYTHON, "-c", "import sys\nfor _ in range(400):\n    sys.stdout.write('y' * 250_000)")
    workspace = workspace_for(tmp_path, argv)
    tracemalloc.start()
    try:
        observation = run(workspace, argv)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    expected = sha(b"y" * OUTPUT_LIMIT_BYTES)
    assert OUTPUT_LIMIT_BYTES == 10 * 1024 * 1024
    assert observation.endswith(
        f"[{100_000_000 - OUTPUT_LIMIT_CHARS} more characters of output are not shown here;"
        " the first bytes of the output, up to the cap, are kept with the receipt]"
    )
    line = last_line(tmp_path)
    assert line["output_sha256"] == expected and line["output_truncated"] is True
    stored = log_path(tmp_path).parent / "objects" / expected
    assert stored.stat().st_size == OUTPUT_LIMIT_BYTES
    assert objects_of(tmp_path) == [expected]
    assert peak < 4 * 1024 * 1024


def test_the_object_is_fsynced_before_it_is_named_by_its_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple[str, int]] = []
    real_fsync, real_rename = os.fsync, os.rename

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        kind = "fsync-dir" if stat.S_ISDIR(info.st_mode) else "fsync"
        events.append((kind, info.st_ino))
        real_fsync(fd)

    def rename(src: str, dst: str, *, src_dir_fd: int, dst_dir_fd: int) -> None:
        events.append(("rename", os.stat(src, dir_fd=src_dir_fd).st_ino))
        real_rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(content.os, "fsync", fsync)
    monkeypatch.setattr(content.os, "rename", rename)
    log_path(tmp_path)
    with ObjectStream(log_path(tmp_path).parent) as stream:
        stream.write(b"first ")
        stream.write(b"second")
        digest = stream.finish()

    assert digest == sha(b"first second")
    named = (log_path(tmp_path).parent / "objects" / digest).stat().st_ino
    assert events[:2] == [("fsync", named), ("rename", named)]
    assert events[2][0] == "fsync-dir"


def test_the_same_output_is_stored_once_and_the_copy_dropped(tmp_path: Path) -> None:
    folder = log_path(tmp_path).parent
    digest = store_object(folder, b"same bytes")
    first = (folder / "objects" / digest).stat().st_ino

    with ObjectStream(folder) as stream:
        stream.write(b"same ")
        stream.write(b"bytes")
        assert stream.finish() == digest

    assert objects_of(tmp_path) == [digest]
    assert (folder / "objects" / digest).stat().st_ino == first


def test_running_a_command_twice_keeps_one_object_and_no_temporary_file(tmp_path: Path) -> None:
    workspace = workspace_for(tmp_path, NUMBERED)
    run(workspace, NUMBERED)
    run(workspace, NUMBERED)

    assert objects_of(tmp_path) == [sha(NUMBERED_BYTES)]


def test_a_write_that_fails_is_reported_by_finish_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    folder = log_path(tmp_path).parent
    with ObjectStream(folder) as stream:
        monkeypatch.setattr(content, "write_all", disk_full)
        stream.write(b"output")  # the command's read loop is never stopped by the store
        with pytest.raises(AgentError, match="No space left on device"):
            stream.finish()

    assert objects_of(tmp_path) == []


def test_a_command_whose_output_cannot_be_stored_has_no_receipt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    workspace = workspace_for(tmp_path, NUMBERED)
    monkeypatch.setattr(content, "write_all", disk_full)
    observation = run(workspace, NUMBERED)

    assert observation.startswith("error: ") and "No space left on device" in observation
    assert workspace.unrecorded_effect is not None
    assert log_path(tmp_path).read_text() == ""
    assert objects_of(tmp_path) == []


def test_an_unfinished_stream_removes_its_temporary_file(tmp_path: Path) -> None:
    folder = log_path(tmp_path).parent
    with pytest.raises(RuntimeError), ObjectStream(folder) as stream:
        stream.write(b"partial")
        assert len(objects_of(tmp_path)) == 1
        raise RuntimeError("the command could not be run")

    assert objects_of(tmp_path) == []


def test_a_command_that_cannot_start_leaves_no_temporary_file(tmp_path: Path) -> None:
    argv = (str(tmp_path / "no-such-program"),)
    observation = run(workspace_for(tmp_path, argv), argv)

    assert observation.startswith("error: could not run command")
    assert objects_of(tmp_path) == []


def test_a_symlinked_objects_folder_is_refused_before_the_command_runs(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (log_path(tmp_path).parent / "objects").symlink_to(elsewhere)
    argv = (PYTHON, "-c", "open('ran', 'w').close()")
    observation = run(workspace_for(tmp_path, argv), argv)

    assert observation.startswith("error: content store is not a real folder")
    assert not (tmp_path / "ran").exists()
    assert list(elsewhere.iterdir()) == []


def test_a_store_in_memory_writes_no_object_but_names_the_full_output(tmp_path: Path) -> None:
    store = ReceiptStore()
    run(workspace_for(tmp_path, NUMBERED, store=store), NUMBERED)

    (receipt,) = store.receipts()
    assert receipt.evidence.output_sha256 == sha(NUMBERED_BYTES)
    assert receipt.evidence.output_truncated is False
    assert list(tmp_path.rglob("objects")) == []


def test_the_cap_is_a_setting_that_reaches_the_policy(tmp_path: Path) -> None:
    assert Settings().policy(tmp_path).max_command_output_bytes == 10 * 1024 * 1024
    chosen = Settings.from_mapping({"maxCommandOutputBytes": 4096})
    assert chosen.policy(tmp_path).max_command_output_bytes == 4096
    with pytest.raises(SettingsError, match="maxCommandOutputBytes must be an integer"):
        Settings.from_mapping({"maxCommandOutputBytes": 0})
