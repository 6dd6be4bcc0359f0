"""Hostile trees: what a command leaves is recorded within bounds, never followed and never read
through, and a revert never follows a symlink or writes a protected path."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

from tests.support.workspaces import make_workspace

from counterfoil import AgentError, ReceiptStore, ToolAction, ToolPolicy, Workspace

PYTHON = sys.executable
LOG = ".counterfoil/receipts.jsonl"


def project(root: Path, body: str) -> Workspace:
    (root / ".counterfoil").mkdir(exist_ok=True)
    (root / "tool.py").write_text(body)
    policy = ToolPolicy(root, allowed_commands=((PYTHON, "tool.py"),), command_timeout_seconds=120)
    store = ReceiptStore(root / LOG, signer=None)
    return make_workspace(policy, store=store, answer=True)


def run(space: Workspace) -> str:
    return space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))


def tree_changes(root: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((root / LOG).read_text().splitlines()[-1])["tree_changes"]
    return record


def objects(root: Path) -> set[str]:
    return set(os.listdir(root / ".counterfoil" / "objects"))


def revert(root: Path) -> str:
    """Revert call-1 from a fresh workspace, approving; an AgentError comes back as text."""
    store = ReceiptStore(root / LOG, signer=None)
    space = make_workspace(root, store=store, answer=True)
    try:
        return space.revert("call-1")
    except AgentError as error:
        return f"error: {error}"


def test_a_hundred_thousand_new_files_are_counted_and_only_the_cap_is_listed(
    tmp_path: Path,
) -> None:
    body = (
        "import os\n"
        "for folder in range(100):\n"
        "    os.mkdir(f'd{folder:03}')\n"
        "    for index in range(1000): open(f'd{folder:03}/f{index:04}', 'w').close()\n"
    )
    space = project(tmp_path, body)

    observation = run(space)

    record = tree_changes(tmp_path)
    assert (record["count"], record["listed"]) == (100_000, 1000)
    assert len(observation) < 2000 and "[and 99980 more]" in observation


def test_a_gigabyte_file_is_recorded_by_its_stat_not_hashed_or_stored(tmp_path: Path) -> None:
    body = "with open('big.bin', 'wb') as f:\n    f.truncate(1 << 30)\n"
    space = project(tmp_path, body)
    memory_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    run(space)

    (change,) = tree_changes(tmp_path)["changes"]
    assert (change["path"], change["size"], change["after_sha256"]) == ("big.bin", 1 << 30, None)
    assert "not hashed" in change["note"]
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - memory_before
    assert grown_kib < 200 * 1024


def test_a_fifo_is_recorded_and_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "already.fifo")
    space = project(tmp_path, "import os\nos.mkfifo('new.fifo')\n")

    run(space)

    (change,) = tree_changes(tmp_path)["changes"]
    assert (change["path"], change["kind"], change["after_sha256"]) == ("new.fifo", "other", None)


def test_a_symlink_to_outside_is_recorded_by_its_target_text_and_never_followed(
    tmp_path: Path,
) -> None:
    secret = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    secret.write_text("outside bytes\n")
    root = tmp_path / "p"
    root.mkdir()
    space = project(root, f"import os\nos.symlink({str(secret)!r}, 'link')\n")

    run(space)

    (change,) = tree_changes(root)["changes"]
    assert (change["path"], change["kind"]) == ("link", "symlink")
    assert change["after_sha256"] == hashlib.sha256(str(secret).encode()).hexdigest()
    assert hashlib.sha256(b"outside bytes\n").hexdigest() not in objects(root)


def test_a_file_with_other_hard_links_is_recorded_but_never_read(tmp_path: Path) -> None:
    secret = tmp_path.parent / f"{tmp_path.name}-linked.txt"
    secret.write_text("linked bytes\n")
    root = tmp_path / "p"
    root.mkdir()
    space = project(root, f"import os\nos.link({str(secret)!r}, 'linked.txt')\n")

    run(space)

    (change,) = tree_changes(root)["changes"]
    assert (change["path"], change["after_sha256"]) == ("linked.txt", None)
    assert change["note"] == "has other hard links"
    assert hashlib.sha256(b"linked bytes\n").hexdigest() not in objects(root)


def test_a_write_to_a_protected_name_is_recorded_without_its_bytes_or_its_name_for_the_model(
    tmp_path: Path,
) -> None:
    space = project(tmp_path, "open('.env', 'w').write('API_KEY=secret\\n')\n")

    observation = run(space)

    (change,) = tree_changes(tmp_path)["changes"]
    assert (change["path"], change["after_sha256"], change["note"]) == (".env", None, "protected")
    assert "[1 protected file changed]" in observation and ".env" not in observation
    assert hashlib.sha256(b"API_KEY=secret\n").hexdigest() not in objects(tmp_path)


def test_revert_never_writes_a_protected_path(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("A=1\n")
    space = project(tmp_path, "open('.env', 'w').write('A=2\\n'); open('x.txt', 'w').close()\n")
    run(space)

    result = revert(tmp_path)

    assert "left alone:\n  .env: protected" in result
    assert (tmp_path / ".env").read_text() == "A=2\n"
    assert not (tmp_path / "x.txt").exists()


def test_revert_never_writes_through_a_symlink_put_in_a_files_place(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-target.txt"
    outside.write_text("outside\n")
    root = tmp_path / "p"
    root.mkdir()
    (root / "data.txt").write_text("before\n")
    space = project(root, "open('data.txt', 'w').write('after\\n')\n")
    run(space)
    (root / "data.txt").unlink()
    (root / "data.txt").symlink_to(outside)

    result = revert(root)

    assert result.startswith("error: nothing of call-1 can be reverted (data.txt: ")
    assert outside.read_text() == "outside\n"


def test_revert_never_follows_a_symlinked_folder(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-folder"
    outside.mkdir()
    root = tmp_path / "p"
    root.mkdir()
    space = project(root, "import os\nos.mkdir('gen')\nopen('gen/out.txt', 'w').write('x')\n")
    run(space)
    (outside / "out.txt").write_text("x")
    (root / "gen" / "out.txt").unlink()
    (root / "gen").rmdir()
    (root / "gen").symlink_to(outside)

    result = revert(root)

    assert result == (
        "error: nothing of call-1 can be reverted (gen/out.txt: a symlink on the path)"
    )
    assert (outside / "out.txt").read_text() == "x"
