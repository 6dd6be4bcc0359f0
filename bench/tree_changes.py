"""What recording a command's tree changes costs, beside `git status --porcelain` on the same tree.

A generated tree of 20,000 small files in 200 folders, committed to git (so `git status`
compares against its index, as in a real checkout). Round by round, side by side:
- unchanged: the after-snapshot and comparison a command pays when it ends (the stat cache
  warm from its before-snapshot), vs `git status --porcelain`;
- 100 changed: the same after 100 files were rewritten, vs `git status` on that state;
- before: the before-snapshot a command pays once approved (warm from the last command);
- a new workspace's first before-snapshot (warm from the process's stat cache, as a new run's
  first command in the daemon), and the same in a fresh process's first workspace (cold:
  every file read and kept in the content store);
- sandbox start-up: `true` run through the reaper with `commandSandbox` off vs confine.
The figures are medians over rounds. Prints a table, then one JSON line of the figures.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workload import median_ratio

FOLDERS, FILES_PER_FOLDER, CHANGED = 200, 100, 100
ROUNDS = 9


def generate(root: Path) -> int:
    for folder in range(FOLDERS):
        path = root / f"pkg{folder:03}"
        path.mkdir()
        for index in range(FILES_PER_FOLDER):
            (path / f"mod{index:03}.py").write_text(f"VALUE = {folder * 1000 + index}\n")
    (root / ".gitignore").write_text("__pycache__/\n*.log\n")
    git = ["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tree"], check=True)
    return FOLDERS * FILES_PER_FOLDER + 1


def git_status(root: Path) -> tuple[float, int]:
    started = time.perf_counter()
    completed = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain"], capture_output=True, check=True
    )
    return time.perf_counter() - started, len(completed.stdout.splitlines())


def change_files(root: Path, round_number: int) -> None:
    for index in range(CHANGED):
        folder, file = divmod(index * 199, FILES_PER_FOLDER)
        path = root / f"pkg{folder % FOLDERS:03}" / f"mod{file:03}.py"
        path.write_text(f"VALUE = 'changed in round {round_number}'\n")


def sandbox_start_ms(root: Path, mode: str) -> float | None:
    from counterfoil.commands.runner import run_bounded
    from counterfoil.commands.tree.sandbox import sandbox_for
    from counterfoil.errors import AgentError

    try:
        sandbox = sandbox_for(mode, root, network=False)
    except AgentError:
        return None
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        result = run_bounded(["true"], root, 30, wrapper=sandbox.prefix)
        times.append(time.perf_counter() - started)
        assert result.status == 0, result
    return statistics.median(times) * 1000


def main() -> None:
    from counterfoil.commands.tree.command_tree import CommandTree
    from counterfoil.commands.tree.snapshot import TreeLimits, TreeRules
    from counterfoil.receipts import ReceiptStore

    if shutil.which("git") is None:
        print("git is not installed; this benchmark compares against it")
        sys.exit(2)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "tree"
        root.mkdir()
        files = generate(root)
        git_status(root)  # git refreshes its index once, as a real checkout would have
        # The comparison keeps bytes in a store in memory (hashed, not written), so the rounds
        # measure the walk and the comparison; the first before-snapshots below use a log.
        tree = CommandTree(root, TreeRules(), ReceiptStore(), TreeLimits())
        time.sleep(0.2)  # out of the stat cache's racy window
        tree.before()
        figures: dict[str, list[float]] = {key: [] for key in ("ours", "git", "ours100", "git100")}
        before_times: list[float] = []
        for round_number in range(ROUNDS):
            started = time.perf_counter()
            before, _ = tree.before()
            before_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            unchanged = tree.after(before)
            figures["ours"].append(time.perf_counter() - started)
            assert unchanged.count == 0
            seconds, lines = git_status(root)
            figures["git"].append(seconds)
            assert lines == 0

            before, _ = tree.before()
            change_files(root, round_number)
            started = time.perf_counter()
            changed = tree.after(before)
            figures["ours100"].append(time.perf_counter() - started)
            assert changed.count == CHANGED, changed.count
            seconds, lines = git_status(root)
            figures["git100"].append(seconds)
            assert lines == CHANGED
            subprocess.run(["git", "-C", str(root), "checkout", "-q", "--", "."], check=True)
            time.sleep(0.15)  # the restored files leave the racy window before the next round
        log = Path(directory) / "log" / "receipts.jsonl"
        log.parent.mkdir()
        started = time.perf_counter()
        CommandTree(root, TreeRules(), ReceiptStore(log, signer=None), TreeLimits()).before()
        cold_seconds = time.perf_counter() - started
        new_workspace: list[float] = []
        for _ in range(ROUNDS):
            fresh = CommandTree(root, TreeRules(), ReceiptStore(log, signer=None), TreeLimits())
            started = time.perf_counter()
            fresh.before()
            new_workspace.append(time.perf_counter() - started)
        off_ms = sandbox_start_ms(root, "off")
        confine_ms = sandbox_start_ms(root, "confine")

    def ms(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 1)

    result = {
        "files": files,
        "rounds": ROUNDS,
        "unchanged_ms": ms(figures["ours"]),
        "unchanged_git_status_ms": ms(figures["git"]),
        "unchanged_ratio": round(median_ratio(figures["ours"], figures["git"]), 2),
        "changed_100_ms": ms(figures["ours100"]),
        "changed_100_git_status_ms": ms(figures["git100"]),
        "changed_100_ratio": round(median_ratio(figures["ours100"], figures["git100"]), 2),
        "before_snapshot_ms": ms(before_times),
        "new_workspace_first_before_ms": ms(new_workspace),
        "cold_first_before_ms": round(cold_seconds * 1000, 1),
        "sandbox_off_ms": None if off_ms is None else round(off_ms, 1),
        "sandbox_confine_ms": None if confine_ms is None else round(confine_ms, 1),
        "sandbox_start_cost_ms": None
        if off_ms is None or confine_ms is None
        else round(confine_ms - off_ms, 1),
        "load_average": round(os.getloadavg()[0], 2),
    }
    print(f"tree: {files} files; {ROUNDS} rounds; load average {result['load_average']}")
    print(f"{'comparison':<34} {'ours ms':>8} {'git status ms':>14} {'x git':>6}")
    print(
        f"{'unchanged tree (after + compare)':<34} {result['unchanged_ms']:>8} "
        f"{result['unchanged_git_status_ms']:>14} {result['unchanged_ratio']:>6}"
    )
    print(
        f"{'100 files changed':<34} {result['changed_100_ms']:>8} "
        f"{result['changed_100_git_status_ms']:>14} {result['changed_100_ratio']:>6}"
    )
    print(f"{'before-snapshot (warm)':<34} {result['before_snapshot_ms']:>8}")
    print(f"{'new workspace, first before':<34} {result['new_workspace_first_before_ms']:>8}")
    print(f"{'new process, first before (cold)':<34} {result['cold_first_before_ms']:>8}")
    print(
        f"sandbox start-up per command: off {result['sandbox_off_ms']} ms, confine "
        f"{result['sandbox_confine_ms']} ms, cost {result['sandbox_start_cost_ms']} ms"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
