"""The C listing owns what it reads while the GIL is released: another thread that changes the
batch or a previous listing meanwhile changes neither the result nor the process's life. Each
case runs in a child process, so a crash is a failed test and not a lost test run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from counterfoil.commands.tree import listing

NAMES = 30_000  # enough that the C loop's lstats outlast the other thread's change

CHILD = textwrap.dedent(
    """
    import os, sys, threading
    from counterfoil.commands.tree import _listing, listing

    folder, target = sys.argv[1], sys.argv[2]
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    expected = listing.python_folder_listing(fd)
    for attempt in range(20):
        previous = list(expected)
        batch = [(fd, previous)]
        start, changed = threading.Event(), threading.Event()

        def change():
            start.wait()
            if target == "previous":
                previous[:] = [("x",)] * len(previous)
            else:
                batch[:] = [None]
            changed.set()

        other = threading.Thread(target=change)
        other.start()
        start.set()
        result = _listing.listings(batch, 1)
        during = changed.is_set()
        other.join()
        if during:
            assert result[0] == expected, "the listing changed with its input"
            print("changed during the call")
            break
    os.close(fd)
    """
)


@pytest.fixture(scope="module")
def wide_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wide")
    for index in range(NAMES):
        (folder / f"f{index}").touch()
    return folder


@pytest.mark.skipif(listing.compiled is None, reason="the C listing was not built")
@pytest.mark.parametrize("target", ["previous", "batch"])
def test_a_list_changed_by_another_thread_during_the_call_leaves_the_result_as_given(
    wide_folder: Path, target: str
) -> None:
    server = Path(listing.__file__).parents[3]
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(wide_folder), target],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(server), "PATH": "/usr/bin:/bin"},
    )

    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout == "changed during the call\n"
