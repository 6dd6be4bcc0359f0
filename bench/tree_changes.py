"""What recording a command's tree changes costs, beside `git status --porcelain` on the same tree.

A generated tree of 20,000 small files in 200 folders, committed to git (so `git status`
compares against its index, as in a real checkout). Round by round, side by side, for each way
of walking (the listing loops in C on 1, 2 and 4 threads, and in Python on one; the default is
C on one thread per CPU, up to 4), in an order that turns each round:
- unchanged: the after-snapshot and comparison a command pays when it ends (the stat cache
  warm from its before-snapshot), vs `git status --porcelain`;
- 100 changed: the same after 100 files were rewritten, a tenth of them in place with the same
  size and their old mtime put back (which only ctime tells), vs `git status` on that state;
  every way must find all 100;
- before: the before-snapshot a command pays once approved (warm from the last command);
- a new workspace's first before-snapshot (warm from the process's stat cache, as a new run's
  first command in the daemon), and the same in a fresh process's first workspace (cold:
  every file read and kept in the content store);
- sandbox start-up: `true` run through the reaper with `commandSandbox` off vs confine.
Both sides do the same work on the same, warm tree: `git status --porcelain` (untracked files
included, its index refreshed once before the rounds, so it lstats each tracked file and lists
each folder) against a walk that lstats each file and lists each folder whose own stat changed
(a folder whose mtime, ctime and inode are unchanged is not listed again; its files are still
each lstat'ed, since a file rewritten in place leaves its folder alone). git lstats its index
on up to 20 threads (`core.preloadIndex`); the C loops stat a batch of folders on their own
threads with the GIL released (the Python loops stay on one: handing the GIL between two
threads per file costs more than the stat), and git's figure with `-c core.preloadIndex=false`
is shown beside it. Not used: inotify, which would skip the
lstats but misses writes (through a hard link from outside the tree, through a shared mmap
opened before the watch, on a network or FUSE filesystem) that a stat catches.
The figures are medians over rounds (ratios per round, then their median). `--quick` runs a
tiny tree for a few rounds (seconds), to check the bench still runs. Prints a table, then one
JSON line of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from workload import median_ratio


@dataclass(frozen=True)
class Sizes:
    folders: int = 200
    files_per_folder: int = 100
    changed: int = 100
    in_place: int = 10  # of the changed: same size, old mtime put back
    rounds: int = 9


FULL, QUICK = Sizes(), Sizes(folders=10, files_per_folder=20, changed=10, in_place=2, rounds=3)


@dataclass(frozen=True)
class Way:
    threads: int
    compiled: bool  # the listing loops in C (else in Python)


def ways() -> dict[str, Way]:
    """Each way of walking by name, the default's marked: the C loops on 1, 2 and 4 threads
    (where they were built), and the Python loops on the walk's own thread."""
    from counterfoil.commands.tree import listing

    default = Way(listing.default_threads(), listing.COMPILED)
    named: dict[Way, str] = {}
    if listing.COMPILED:
        for threads in (1, 2, 4):
            named[Way(threads, True)] = f"C, {threads} thread{'' if threads == 1 else 's'}"
    named[Way(0, False)] = "Python, 1 thread"
    if default not in named:
        named[default] = f"{'C' if default.compiled else 'Python'}, {default.threads} threads"
    named[default] += " (default)"
    return {name: way for way, name in named.items()}


@contextmanager
def walking(way: Way) -> Iterator[None]:
    """The walk's listing loops as `way` has them, for the calls inside."""
    from counterfoil.commands.tree import listing

    built = listing.compiled
    listing.compiled = built if way.compiled else None
    try:
        yield
    finally:
        listing.compiled = built


def generate(root: Path, sizes: Sizes) -> int:
    for folder in range(sizes.folders):
        path = root / f"pkg{folder:03}"
        path.mkdir()
        for index in range(sizes.files_per_folder):
            (path / f"mod{index:03}.py").write_text(f"VALUE = {folder * 1000 + index:06}\n")
    (root / ".gitignore").write_text("__pycache__/\n*.log\n")
    git = ["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tree"], check=True)
    return sizes.folders * sizes.files_per_folder + 1


def git_status(root: Path, *options: str) -> tuple[float, int]:
    started = time.perf_counter()
    completed = subprocess.run(
        ["git", "-C", str(root), *options, "status", "--porcelain"],
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - started, len(completed.stdout.splitlines())


ONE_THREAD = ("-c", "core.preloadIndex=false")


def change_files(root: Path, sizes: Sizes, round_number: int) -> None:
    """`sizes.changed` files rewritten; the first `sizes.in_place` in place, with the same
    size and their mtime put back."""
    for index in range(sizes.changed):
        folder, file = divmod(index * 199, sizes.files_per_folder)
        path = root / f"pkg{folder % sizes.folders:03}" / f"mod{file:03}.py"
        if index < sizes.in_place:
            kept = os.stat(path)
            text = path.read_bytes()
            with open(path, "r+b") as handle:
                handle.write(text.replace(b"VALUE", b"VALUX"))
            os.utime(path, ns=(kept.st_atime_ns, kept.st_mtime_ns))
        else:
            path.write_text(f"VALUE = 'changed in round {round_number}'\n")


def sandbox_start_ms(root: Path, mode: str, rounds: int) -> float | None:
    from counterfoil.commands.runner import run_bounded
    from counterfoil.commands.tree.sandbox import sandbox_for
    from counterfoil.errors import AgentError

    try:
        sandbox = sandbox_for(mode, root, network=False)
    except AgentError:
        return None
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        result = run_bounded(["true"], root, 30, wrapper=sandbox.prefix)
        times.append(time.perf_counter() - started)
        assert result.status == 0, result
    return statistics.median(times) * 1000


def measure_ways(root: Path, sizes: Sizes) -> tuple[dict[str, dict[str, list[float]]], list[float]]:
    """Per way: its after-snapshot times (unchanged, changed) and git's beside them, per
    round; and the default way's before-snapshot times."""
    from counterfoil.commands.tree.command_tree import CommandTree
    from counterfoil.commands.tree.snapshot import TreeLimits, TreeRules
    from counterfoil.receipts import ReceiptStore

    # The comparison keeps bytes in a store in memory (hashed, not written), so the rounds
    # measure the walk and the comparison.
    named = ways()
    trees = {
        name: CommandTree(root, TreeRules(), ReceiptStore(), TreeLimits(walk_threads=way.threads))
        for name, way in named.items()
    }
    for name, tree in trees.items():
        with walking(named[name]):
            tree.before()
    time.sleep(0.2)  # out of the stat cache's racy window
    times: dict[str, dict[str, list[float]]] = {
        way: {key: [] for key in ("ours", "git", "git1", "ours100", "git100")} for way in named
    }
    before_times: list[float] = []
    names = list(named)
    for round_number in range(sizes.rounds):
        order = names[round_number % len(names) :] + names[: round_number % len(names)]
        for way in order:
            with walking(named[way]):
                started = time.perf_counter()
                before, _ = trees[way].before()
                if way.endswith("(default)"):
                    before_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                unchanged = trees[way].after(before)
                times[way]["ours"].append(time.perf_counter() - started)
            assert unchanged.count == 0, unchanged.paths
            seconds, lines = git_status(root)
            times[way]["git"].append(seconds)
            assert lines == 0
            times[way]["git1"].append(git_status(root, *ONE_THREAD)[0])
        befores = {}
        for way in order:
            with walking(named[way]):
                befores[way] = trees[way].before()[0]
        change_files(root, sizes, round_number)
        for way in order:
            with walking(named[way]):
                started = time.perf_counter()
                changed = trees[way].after(befores[way])
                times[way]["ours100"].append(time.perf_counter() - started)
            assert changed.count == sizes.changed, (way, changed.count)
            seconds, lines = git_status(root)
            times[way]["git100"].append(seconds)
            assert lines == sizes.changed, lines
        subprocess.run(["git", "-C", str(root), "checkout", "-q", "--", "."], check=True)
        time.sleep(0.15)  # the restored files leave the racy window before the next round
    return times, before_times


def main() -> None:
    from counterfoil.commands.tree.command_tree import CommandTree
    from counterfoil.commands.tree.snapshot import TreeLimits, TreeRules
    from counterfoil.receipts import ReceiptStore

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a tiny tree, a few rounds")
    sizes = QUICK if parser.parse_args().quick else FULL
    if shutil.which("git") is None:
        print("git is not installed; this benchmark compares against it")
        sys.exit(2)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "tree"
        root.mkdir()
        files = generate(root, sizes)
        git_status(root)  # git refreshes its index once, as a real checkout would have
        times, before_times = measure_ways(root, sizes)
        log = Path(directory) / "log" / "receipts.jsonl"
        log.parent.mkdir()
        started = time.perf_counter()
        CommandTree(root, TreeRules(), ReceiptStore(log, signer=None), TreeLimits()).before()
        cold_seconds = time.perf_counter() - started
        new_workspace: list[float] = []
        for _ in range(sizes.rounds):
            fresh = CommandTree(root, TreeRules(), ReceiptStore(log, signer=None), TreeLimits())
            started = time.perf_counter()
            fresh.before()
            new_workspace.append(time.perf_counter() - started)
        off_ms = sandbox_start_ms(root, "off", sizes.rounds)
        confine_ms = sandbox_start_ms(root, "confine", sizes.rounds)

    def ms(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 1)

    ways = {
        way: {
            "unchanged_ms": ms(figures["ours"]),
            "unchanged_git_status_ms": ms(figures["git"]),
            "unchanged_ratio": round(median_ratio(figures["ours"], figures["git"]), 2),
            "unchanged_git_one_thread_ms": ms(figures["git1"]),
            "unchanged_ratio_git_one_thread": round(
                median_ratio(figures["ours"], figures["git1"]), 2
            ),
            "changed_100_ms": ms(figures["ours100"]),
            "changed_100_git_status_ms": ms(figures["git100"]),
            "changed_100_ratio": round(median_ratio(figures["ours100"], figures["git100"]), 2),
        }
        for way, figures in times.items()
    }
    default = next(figures for way, figures in ways.items() if way.endswith("(default)"))
    result = {
        "files": files,
        "changed": sizes.changed,
        "changed_in_place": sizes.in_place,
        "rounds": sizes.rounds,
        **default,
        "ways": ways,
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
    print(
        f"tree: {files} files; {sizes.changed} changed ({sizes.in_place} in place, old mtime "
        f"put back); {sizes.rounds} rounds; load average {result['load_average']}"
    )
    print(f"{'way':<28} {'tree':<10} {'ours ms':>8} {'git status ms':>14} {'x git':>6}")
    for way, figures in ways.items():
        for label, key in (("unchanged", "unchanged"), (f"{sizes.changed} changed", "changed_100")):
            print(
                f"{way:<28} {label:<10} {figures[key + '_ms']:>8} "
                f"{figures[key + '_git_status_ms']:>14} {figures[key + '_ratio']:>6}"
            )
    print(
        f"git status with core.preloadIndex=false, unchanged: {default['unchanged_git_one_thread_ms']}"
        f" ms (x {default['unchanged_ratio_git_one_thread']})"
    )
    print(f"{'before-snapshot (warm)':<39} {result['before_snapshot_ms']:>8}")
    print(f"{'new workspace, first before':<39} {result['new_workspace_first_before_ms']:>8}")
    print(f"{'new process, first before (cold)':<39} {result['cold_first_before_ms']:>8}")
    print(
        f"sandbox start-up per command: off {result['sandbox_off_ms']} ms, confine "
        f"{result['sandbox_confine_ms']} ms, cost {result['sandbox_start_cost_ms']} ms"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
