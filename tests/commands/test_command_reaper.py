"""The reaper's view of the process tree, read from /proc on Linux and from ps elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from counterfoil.commands.reaper import ProcessTable, descendants, proc_table, ps_table


@pytest.fixture
def sleeping_grandchild() -> Iterator[tuple[int, int]]:
    """A child that starts a grandchild: (child pid, grandchild pid)."""
    script = (
        "import subprocess, sys, time\n"
        "grandchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(grandchild.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    grandchild = int(child.stdout.readline())
    yield child.pid, grandchild
    for pid in (grandchild, child.pid):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    child.wait()


@pytest.mark.parametrize("table", [proc_table, ps_table], ids=["proc", "ps"])
def test_descendants_are_found_through_every_generation(
    sleeping_grandchild: tuple[int, int], table: Callable[[], ProcessTable]
) -> None:
    child, grandchild = sleeping_grandchild
    found = descendants(table(), os.getpid())

    assert {child, grandchild} <= found
    assert os.getpid() not in found


def test_proc_and_ps_agree_on_parents(sleeping_grandchild: tuple[int, int]) -> None:
    child, grandchild = sleeping_grandchild
    from_proc, from_ps = proc_table(), ps_table()

    for pid in (child, grandchild):
        assert from_proc[pid][0] == from_ps[pid][0]
