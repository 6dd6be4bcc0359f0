"""search_files against ripgrep run directly, on the same tree and the same query.

The tree is a copy of this interpreter's standard library (no site-packages, no
__pycache__): some 2,000 source files plus the binaries that ship with it. The tree is warmed
before anything is timed: it was just written, and every query runs once through all three
(uncounted), so every file is in the page cache. Each query then runs side by side, round by
round: `rg -n PATTERN` exactly as a person would type it, then
`search_files` through the gate with ripgrep, then the pure-Python fallback. The figure is the
median over rounds of each pair's ratio. search_files stops at 100 hits and ripgrep prints all,
so the ratio is honest only for the selective queries (marked); the broad one is shown for
what the cap buys. Prints a table, then one JSON line of the figures.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from workload import QUICK, median_ratio, sized

T = TypeVar("T")
ROUNDS = sized(7, 1)
QUERIES = (
    ("class HTTPServer", True),  # (pattern, selective: few hits, the whole tree is read)
    ("zzqq_absent_[0-9]+", True),
    ("AF_UNIX, socket\\.SOCK", True),
    ("def __init__", False),
)


def copy_standard_library(target: Path) -> int:
    source = Path(sysconfig.get_paths()["stdlib"])
    if QUICK:
        source = source / "http"  # a few files
    shutil.copytree(
        source,
        target,
        ignore=shutil.ignore_patterns("site-packages", "__pycache__", "dist-packages"),
        symlinks=True,
    )
    return sum(len(files) for _, _, files in os.walk(target))


def timed(call: Callable[..., T], *arguments: object) -> tuple[float, T]:
    started = time.perf_counter()
    result = call(*arguments)
    return time.perf_counter() - started, result


def run_ripgrep(argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, capture_output=True, check=False)


def main() -> None:
    from counterfoil import ToolPolicy, Workspace
    from counterfoil.gate.workspace_setup import WorkspaceSetup

    ripgrep = shutil.which("rg")
    if ripgrep is None:
        print("ripgrep (rg) is not installed; this benchmark compares against it")
        sys.exit(2)
    version = subprocess.run([ripgrep, "--version"], capture_output=True, text=True, check=False)
    with tempfile.TemporaryDirectory() as directory:
        tree = Path(directory) / "stdlib"
        files = copy_standard_library(tree)
        workspaces = {}
        for engine in ("ripgrep", "python"):
            setup = WorkspaceSetup(search_engine=engine)
            workspaces[engine] = Workspace(ToolPolicy(tree, allow_search=True), setup=setup)

        for pattern, _ in QUERIES:  # the warm-up round, not counted
            run_ripgrep([ripgrep, "-n", pattern, str(tree)])
            for workspace in workspaces.values():
                workspace.search_files(pattern)

        rows = []
        for pattern, selective in QUERIES:
            direct: list[float] = []
            through_rg: list[float] = []
            through_python: list[float] = []
            for _ in range(ROUNDS):
                seconds, output = timed(run_ripgrep, [ripgrep, "-n", pattern, str(tree)])
                direct.append(seconds)
                direct_hits = len(output.stdout.splitlines())
                seconds, observation = timed(workspaces["ripgrep"].search_files, pattern)
                through_rg.append(seconds)
                seconds, fallback = timed(workspaces["python"].search_files, pattern)
                through_python.append(seconds)
            assert observation == fallback, f"engines disagree on {pattern!r}"
            hits = sum(
                1 for line in str(observation).splitlines() if not line.startswith(("[", "("))
            )
            rows.append(
                {
                    "pattern": pattern,
                    "selective": selective,
                    "rg_hits": direct_hits,
                    "search_hits": hits,
                    "rg_ms": round(statistics.median(direct) * 1000, 1),
                    "search_ripgrep_ms": round(statistics.median(through_rg) * 1000, 1),
                    "search_python_ms": round(statistics.median(through_python) * 1000, 1),
                    "ratio_ripgrep": round(median_ratio(through_rg, direct), 2),
                    "ratio_python": round(median_ratio(through_python, direct), 2),
                }
            )

    print(
        f"{version.stdout.splitlines()[0]}; tree: {files} files, warmed; {ROUNDS} rounds; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'pattern':<26} {'hits rg':>7} {'hits':>5} {'rg ms':>7} {'search ms':>9} "
        f"{'x rg':>5} {'python ms':>9} {'x rg':>6}"
    )
    for row in rows:
        mark = "" if row["selective"] else " *"
        print(
            f"{row['pattern'] + mark:<26} {row['rg_hits']:>7} {row['search_hits']:>5} "
            f"{row['rg_ms']:>7} {row['search_ripgrep_ms']:>9} {row['ratio_ripgrep']:>5} "
            f"{row['search_python_ms']:>9} {row['ratio_python']:>6}"
        )
    print("* search_files stops at 100 hits; rg prints every hit")
    selective = [row for row in rows if row["selective"]]
    worst = max(row["ratio_ripgrep"] for row in selective)
    figures = {
        "benchmark": "search",
        "files": files,
        "rounds": ROUNDS,
        "warmed": "tree just written; one uncounted round of every query through all three",
        "load_average": round(os.getloadavg()[0], 1),
        "queries": rows,
        "worst_selective_ratio_ripgrep": worst,
        "worst_selective_ratio_python": max(row["ratio_python"] for row in selective),
        "target_ratio": 1.5,
        "within_target": worst <= 1.5,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
