"""A crash at every durable step of an edit and of a command, then a fresh open and a resume:
the account is right every time, and no effect ran twice (in the manner of ALICE and
CrashMonkey, with the fault hook of crash_points.py)."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from crash_points import CRASH_STATUS
from sweep_helpers import account, agent_flags, environment, make_project

HOOK = Path(__file__).with_name("crash_points.py")
REQUIRED_POINTS = {
    "intent written",
    "temporary file fsynced",
    "file renamed",
    "folder fsynced",
    "receipt appended",
    "head replaced",
    "checkpoint written",
}


# The sweep is of durability: a resumed script ends at its final answer whatever an interrupted
# command leaves for the final check to ask for (tests/sessions/test_resume_checks.py has that).
NO_FINAL_CHECK = ["--no-check-final-answer"]


def crashed_run(folder: Path, crash_at: int) -> int:
    trace = folder / "trace.txt"
    completed = subprocess.run(
        [
            sys.executable,
            str(HOOK),
            str(trace),
            str(crash_at),
            "--",
            "agent",
            "fix app.py",
            *agent_flags(folder),
            *NO_FINAL_CHECK,
        ],
        check=False,
        input="y\ny\n",
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
    )
    return completed.returncode


def resumed(folder: Path) -> tuple[int, str]:
    completed = subprocess.run(
        [sys.executable, "-m", "counterfoil", "resume", *agent_flags(folder), *NO_FINAL_CHECK],
        check=False,
        input="y\ny\n",
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
    )
    return completed.returncode, completed.stdout


def test_a_crash_at_every_durable_step_leaves_a_right_account(tmp_path: Path) -> None:
    traced = tmp_path / "trace"
    make_project(traced)
    assert crashed_run(traced, 0) in (0, 1)  # the verdict: validation is stale after the command
    points = (traced / "trace.txt").read_text().splitlines()
    assert REQUIRED_POINTS <= set(points)

    def crash_then_resume(step: int) -> tuple[int, int, str]:
        folder = tmp_path / f"crash-{step}"
        make_project(folder)
        crashed = crashed_run(folder, step)
        return (crashed, *resumed(folder)) if crashed == CRASH_STATUS else (crashed, 0, "")

    # Each crash point has a folder of its own, so two run at once (each a crashed CLI process,
    # then a resuming one) and a second core is not left idle; the accounts are read after.
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(crash_then_resume, range(1, len(points) + 1)))

    wrong: list[str] = []
    for (step, point), (crashed, status, output) in zip(
        enumerate(points, start=1), runs, strict=True
    ):
        folder = tmp_path / f"crash-{step}"
        assert crashed == CRASH_STATUS, f"step {step} ({point}) did not crash"
        found = account(folder)
        where = f"crash after step {step} ({point})"
        edited = found.app == "answer = 2\n"
        finished = "== run ended: completed ==" in output  # its exit is the verdict's, 0 or 1
        if (status == 2 and "nothing to resume" not in output) or (status != 2 and not finished):
            wrong.append(f"{where}: resume exited {status}: {output[-300:]}")
        if len(found.edit_receipts) != (1 if edited else 0):
            wrong.append(
                f"{where}: app.py edited={edited} with {len(found.edit_receipts)} receipts"
            )
        if found.count > 1 or len(found.command_receipts) > 1:
            wrong.append(f"{where}: the command ran {found.count} times")
        if found.count == 1 and len(found.command_receipts) != 1:
            wrong.append(f"{where}: the command ran without a receipt")
        if not found.verified or found.unsettled_intents:
            wrong.append(f"{where}: verified={found.verified} open={found.unsettled_intents}")
        if status != 2 and not (edited and len(found.command_receipts) == 1):
            wrong.append(f"{where}: the resumed run did not finish the work")
        if status != 2 and edited and "  app.py (call-" not in output:
            wrong.append(f"{where}: the resumed verdict leaves out the edit of app.py")
        if status == 0:
            wrong.append(f"{where}: the resumed verdict is exit 0, but nothing validated app.py")
        if edited and "changed since it was read: app.py" in output:
            wrong.append(f"{where}: the run's own receipted edit was told as a change")
    assert wrong == []
