"""run_command: no shell, nothing it started outlives it, output bounded in memory."""

from __future__ import annotations

import os
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest
from tests.support.clocks import ClockAfterReady
from tests.support.processes import finishes, wait_dead

from counterfoil.commands import runner
from counterfoil.commands.runner import OUTPUT_LIMIT_CHARS, run_bounded

# A grandchild that would outlive any test (600 s): only being killed ends it.
SLEEPING_GRANDCHILD = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
    "print(child.pid, flush=True)\n"
)


def test_timeout_kills_the_whole_process_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The timeout passes once the command says its grandchild runs, however slow the start.
    monkeypatch.setattr(runner, "time", ClockAfterReady(tmp_path / "ready"))
    script = SLEEPING_GRANDCHILD + "open('ready', 'w').close()\ntime.sleep(600)\n"
    result = finishes(lambda: run_bounded([sys.executable, "-c", script], tmp_path, 60.0))

    assert result.timed_out
    assert result.observation().startswith("status: timeout\noutput:\n")
    grandchild = int(result.output.split()[0])
    assert wait_dead(grandchild)


def test_a_grandchild_holding_the_pipe_does_not_keep_the_call_waiting(tmp_path: Path) -> None:
    result = finishes(
        lambda: run_bounded([sys.executable, "-c", SLEEPING_GRANDCHILD], tmp_path, 600.0)
    )

    assert result.status == 0
    assert wait_dead(int(result.output.split()[0]))


def test_output_keeps_the_first_characters_and_says_how_many_were_dropped(
    tmp_path: Path,
) -> None:
    total = 5_000_000
    script = f"import sys\nsys.stdout.write('x' * {total})"
    result = run_bounded([sys.executable, "-c", script], tmp_path, 30.0)

    assert result.status == 0
    assert result.output == "x" * OUTPUT_LIMIT_CHARS
    assert result.dropped_chars == total - OUTPUT_LIMIT_CHARS
    assert result.observation().endswith(
        f"\n[{total - OUTPUT_LIMIT_CHARS} more characters of output were dropped]"
    )


def test_huge_output_is_streamed_not_held_in_memory(tmp_path: Path) -> None:
    script = "import sys\nfor _ in range(400):\n    sys.stdout.write('y' * 250_000)"
    tracemalloc.start()
    try:
        result = run_bounded([sys.executable, "-c", script], tmp_path, 60.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert result.dropped_chars == 100_000_000 - OUTPUT_LIMIT_CHARS
    assert peak < 4 * 1024 * 1024


def test_stdout_and_stderr_are_captured_together(tmp_path: Path) -> None:
    script = "import sys\nprint('out', flush=True)\nprint('err', file=sys.stderr, flush=True)"
    result = run_bounded([sys.executable, "-c", script], tmp_path, 30.0)

    assert result.observation() == "status: 0\noutput:\nout\nerr\n"


def test_no_shell_interprets_the_arguments(tmp_path: Path) -> None:
    script = "import sys\nprint(sys.argv[1])"
    result = run_bounded([sys.executable, "-c", script, "$HOME && echo hi"], tmp_path, 30.0)

    assert result.output == "$HOME && echo hi\n"


def test_runs_in_the_given_directory_with_its_exit_status(tmp_path: Path) -> None:
    script = "import os, sys\nprint(os.getcwd())\nsys.exit(3)"
    result = run_bounded([sys.executable, "-c", script], tmp_path, 30.0)

    assert result.status == 3
    assert result.output.strip() == os.fspath(tmp_path)


def test_invalid_utf8_output_is_replaced_not_fatal(tmp_path: Path) -> None:
    script = "import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe end')"
    result = run_bounded([sys.executable, "-c", script], tmp_path, 30.0)

    assert result.output == "ok \ufffd\ufffd end"


# A descendant that leaves the command's session and writes its pid, then waits for `go` (which
# the test writes once the command has ended) before it would write `escaped.txt`: a survivor
# writes it and exits, one that was killed never does.
ESCAPING_DESCENDANT = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        open('escaped.pid.part', 'w').write(str(os.getpid()))\n"
    "        os.rename('escaped.pid.part', 'escaped.pid')\n"
    "        while not os.path.exists('go'):\n"
    "            time.sleep(0.01)\n"
    "        open('escaped.txt', 'w').write('still here')\n"
    "    os._exit(0)\n"
    "os.wait()\n"
    "while not os.path.exists('escaped.pid'):\n"
    "    time.sleep(0.01)\n"
)


def assert_the_descendant_was_killed(root: Path) -> None:
    """Tell a survivor to show itself, then wait for the descendant to be gone."""
    escaped = int((root / "escaped.pid").read_text())
    (root / "go").touch()
    assert wait_dead(escaped)
    assert not (root / "escaped.txt").exists()


def test_a_descendant_that_left_the_session_dies_when_the_command_ends(tmp_path: Path) -> None:
    result = run_bounded([sys.executable, "-c", ESCAPING_DESCENDANT], tmp_path, 60.0)

    assert result.status == 0
    assert result.observation().endswith("[killed 1 leftover process]")
    assert_the_descendant_was_killed(tmp_path)


def test_a_descendant_that_left_the_session_dies_at_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "time", ClockAfterReady(tmp_path / "escaped.pid"))
    script = ESCAPING_DESCENDANT + "time.sleep(600)\n"
    result = finishes(lambda: run_bounded([sys.executable, "-c", script], tmp_path, 60.0))

    assert result.timed_out
    assert_the_descendant_was_killed(tmp_path)


def test_closing_its_output_early_does_not_end_the_command(tmp_path: Path) -> None:
    result = run_bounded(
        ["sh", "-c", "echo before; exec >build.log 2>&1; sleep 1; echo done"], tmp_path, 60.0
    )

    # Its exit status and what it wrote after closing its output: it was waited for.
    assert result.observation() == "status: 0\noutput:\nbefore\n"
    assert (tmp_path / "build.log").read_text() == "done\n"


def test_a_stop_request_ends_the_command_and_everything_it_started(tmp_path: Path) -> None:
    stop = threading.Event()
    ready = tmp_path / "ready"

    def stop_when_ready() -> None:
        while not ready.exists():
            time.sleep(0.01)
        stop.set()

    threading.Thread(target=stop_when_ready, daemon=True).start()
    script = ESCAPING_DESCENDANT + (
        "print('waiting', flush=True)\nopen('ready', 'w').close()\ntime.sleep(60)\n"
    )
    result = finishes(
        lambda: run_bounded([sys.executable, "-c", script], tmp_path, 60.0, stop=stop)
    )

    assert result.terminated
    assert result.observation().startswith("status: terminated\noutput:\nwaiting\n")
    assert_the_descendant_was_killed(tmp_path)
