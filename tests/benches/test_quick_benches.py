"""Every benchmark still runs: each script in bench/ with `--quick` (tiny sizes, seconds) exits 0
and ends with its JSON line of figures. The figures themselves are not judged here; speed
claims live in the benchmarks' full runs."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(
    path.name for path in BENCH.glob("*.py") if 'if __name__ == "__main__":' in path.read_text()
)
NEEDS_MLX = ("mlx", "counterfoil.testing.tiny_model", "load_generate")


def test_the_benchmarks_are_found() -> None:
    assert {"prompt_lookup.py", "receipts.py", "tree_changes.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmark_runs_quick_and_ends_with_its_json_line(script: str) -> None:
    source = (BENCH / script).read_text()
    if any(name in source for name in NEEDS_MLX) and importlib.util.find_spec("mlx") is None:
        pytest.skip("needs the MLX extras")
    done = subprocess.run(
        [sys.executable, script, "--quick"],
        cwd=BENCH,
        capture_output=True,
        text=True,
        timeout=1800,  # only a guard: the real model's --quick ran past 300 s on a busy machine
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr[-4000:]
    figures = json.loads(lines[-1])
    assert isinstance(figures, dict) and figures
