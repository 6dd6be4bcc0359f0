"""`receipts gc` removes only what nothing needs: not what an effect in progress writes, not
what any receipt of any log in the folder names, not what it cannot account for; and the
content store is no more readable than the files it copies."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace, log_path, write
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy
from counterfoil.cli.main import main
from counterfoil.gate.approval import Approval
from counterfoil.receipts.content import OBJECTS_FOLDER, store_object
from counterfoil.receipts.hold import HOLDS_FOLDER
from counterfoil.receipts.retention import kept_digests, register_digest_source

PYTHON = sys.executable
WAITING = (
    PYTHON,
    "-c",
    (
        "import os, time\nprint('started', flush=True)\n"
        "while not os.path.exists('go'):\n    time.sleep(0.02)\nprint('done')"
    ),
)


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def objects(log: Path) -> Path:
    return log.parent / OBJECTS_FOLDER


def gc(log: Path, capsys: pytest.CaptureFixture[str] | None = None) -> tuple[int, str]:
    log.touch()
    status = main(["receipts", "gc", str(log)])
    return status, capsys.readouterr().out if capsys is not None else ""


def test_gc_while_a_command_runs_leaves_its_output_stream_alone(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    policy = ToolPolicy(tmp_path, allowed_commands=(WAITING,))
    workspace = make_workspace(policy, store=ReceiptStore(log), answer=True)
    gc_status: list[int] = []

    def collect_midway() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            folder = objects(log)
            if folder.is_dir() and any(name.endswith(".tmp") for name in os.listdir(folder)):
                break
            time.sleep(0.02)
        gc_status.append(main(["receipts", "gc", str(log)]))
        (tmp_path / "go").touch()

    helper = threading.Thread(target=collect_midway)
    helper.start()
    observation = workspace.execute(ToolAction("run_command", {"argv": list(WAITING)}))
    helper.join()

    assert gc_status == [0]
    assert observation.startswith("status: 0"), observation
    assert workspace.unrecorded_effect is None
    assert (objects(log) / sha(b"started\ndone\n")).read_bytes() == b"started\ndone\n"


def test_gc_between_storing_an_effects_bytes_and_its_receipt_keeps_them(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    store = ReceiptStore(log)
    digest = store.keep_object(b"the bytes before an edit\n")

    assert gc(log)[0] == 0
    assert (objects(log) / digest).is_file()


def test_a_closed_stores_unnamed_objects_are_collected(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    store = ReceiptStore(log)
    digest = store.keep_object(b"stored, never receipted\n")
    store.close()

    assert gc(log)[0] == 0
    assert not (objects(log) / digest).exists()
    assert os.listdir(log.parent / HOLDS_FOLDER) == []


def test_gc_keeps_what_an_edited_approval_showed_the_person(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    policy = ToolPolicy(tmp_path, allow_writes=True)
    answer = Approval(True, text="what the person wrote\n")
    workspace = make_workspace(policy, store=ReceiptStore(log), confirm_proposal=lambda _: answer)
    workspace.execute(write("notes.md", "what the model proposed\n"))
    workspace.receipt_store.close()

    assert gc(log)[0] == 0
    assert (objects(log) / sha(b"what the model proposed\n")).is_file()
    assert (objects(log) / sha(b"what the person wrote\n")).is_file()


def test_gc_of_one_log_keeps_the_objects_of_another_log_in_its_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = log_path(tmp_path)
    other = log.with_name("cli.jsonl")
    policy = ToolPolicy(tmp_path, allow_writes=True)
    workspace = make_workspace(policy, store=ReceiptStore(other), answer=True)
    workspace.execute(write("other.md", "written under the other log\n"))
    workspace.receipt_store.close()
    ReceiptStore(log).put(ReceiptStore(other).receipts()[0])  # the first log has a receipt too

    assert gc(log, capsys)[0] == 0
    assert main(["receipts", "diff", str(other), "call-1"]) == 0
    assert "+written under the other log" in capsys.readouterr().out


def test_gc_refuses_to_remove_anything_while_a_log_beside_it_does_not_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = approving_workspace(tmp_path)
    workspace.execute(write("app.md", "kept\n"))
    log = log_path(tmp_path)
    edited = log.read_text().replace('"wrote app.md"', '"wrote xyz.md"')
    log.with_name("broken.jsonl").write_text(edited)
    stray = objects(log) / sha(b"stray")
    stray.write_bytes(b"stray")

    status, out = gc(log, capsys)
    assert status == 1 and "broken.jsonl does not verify" in out
    assert stray.exists()


def test_a_jsonl_file_that_is_not_a_receipt_log_does_not_stop_gc(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)
    workspace.execute(write("app.md", "kept\n"))
    log = log_path(tmp_path)
    log.with_name("events.jsonl").write_text('{"event": "not a receipt"}\n')

    assert gc(log)[0] == 0


def test_a_folder_with_an_object_name_is_left_in_place_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = approving_workspace(tmp_path)
    workspace.execute(write("app.md", "kept\n"))
    log = log_path(tmp_path)
    (objects(log) / ("e" * 64)).mkdir()

    status, out = gc(log, capsys)
    assert status == 0, out
    assert f"left in place: objects/{'e' * 64} is not a regular file" in out
    assert (objects(log) / ("e" * 64)).is_dir()


def test_gc_removes_the_holds_and_temporary_files_of_processes_that_ended(
    tmp_path: Path,
) -> None:
    log = log_path(tmp_path)
    folder = objects(log)
    folder.mkdir()
    (folder / ".output.1.deadbeef.tmp").write_bytes(b"an interrupted command's output")
    (log.parent / HOLDS_FOLDER).mkdir()
    held = log.parent / HOLDS_FOLDER / "1.deadbeef"
    held.write_text(".output.1.deadbeef.tmp\n")  # nobody holds its lock: its process ended

    assert gc(log)[0] == 0
    assert os.listdir(folder) == [] and not held.exists()


def test_a_registered_source_keeps_the_digests_it_names(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    digest = store_object(log.parent, b"named by a run record\n")
    unregister = register_digest_source(lambda folder: [digest])
    fd = os.open(log.parent, os.O_RDONLY)
    try:
        assert digest in kept_digests(log.parent, fd)
        assert gc(log)[0] == 0
    finally:
        os.close(fd)
        unregister()
    assert (objects(log) / digest).is_file()


def test_stored_bytes_are_no_more_readable_than_a_private_source(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("private\n")
    secret.chmod(0o600)
    workspace = approving_workspace(tmp_path)
    workspace.read_file("secret.md")
    workspace.execute(write("secret.md", "still private\n"))
    log = log_path(tmp_path)

    for content in (b"private\n", b"still private\n"):
        assert stat.S_IMODE((objects(log) / sha(content)).stat().st_mode) == 0o400
    assert stat.S_IMODE(objects(log).stat().st_mode) == 0o700
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.with_name(log.name + ".head").stat().st_mode) == 0o600


def test_an_existing_open_store_is_narrowed_to_its_owner_on_the_next_write(
    tmp_path: Path,
) -> None:
    log = log_path(tmp_path)
    objects(log).mkdir(mode=0o755)
    objects(log).chmod(0o755)
    log.write_text("")
    log.chmod(0o644)
    approving_workspace(tmp_path).execute(write("app.md", "new\n"))

    assert stat.S_IMODE(objects(log).stat().st_mode) == 0o700
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_the_cli_makes_the_log_folder_private_to_its_owner(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text('{"final": "done"}\n')
    project = tmp_path / "project"
    project.mkdir()
    assert main(["agent", "x", "--root", str(project), "--model", f"scripted:{script}"]) == 0

    assert stat.S_IMODE((project / ".counterfoil").stat().st_mode) == 0o700
