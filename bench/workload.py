"""What the benchmarks share: the model they run and the agent prompts they send."""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# `--quick`: tiny sizes and the small test model, so every benchmark runs in seconds in the
# test suite (only that it runs and ends with its JSON line is checked there).
QUICK = "--quick" in sys.argv[1:]

# Large enough that prefill dominates an agent turn, small enough to build offline in seconds.
BENCH_SIZES = {"hidden_size": 512, "num_layers": 8}
BENCH_MODEL = {"vocab_size": 32768, "corpus_bytes": 6_000_000}
SYSTEM = (
    "You are a coding agent. Reply with exactly one JSON object per turn, e.g. "
    '{"tool":"read_file","path":"app.py"}; finish with {"final":"..."}.'
)
GOALS = (
    "Change the greeting to Welcome and validate it.",
    "Record in NOTES.md why the greeting changed.",
    "List the project files and read app.py.",
    "Run python validate.py and report the result.",
    "Explain what greeting.py does.",
    "Rename the greet function and update its callers.",
)


def sized(full: T, quick: T) -> T:
    """`quick` under `--quick`, else `full`."""
    return quick if QUICK else full


def bench_model_dir() -> Path:
    """The benchmark model; under `--quick` the small test model (seed 3) instead."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from counterfoil.testing.tiny_model import TinyShape, cached_tiny_model

    if QUICK:
        return cached_tiny_model(seed=3)
    return cached_tiny_model(shape=TinyShape(**BENCH_SIZES), **BENCH_MODEL)


def agent_messages(goal: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": goal}]


def median_ratio(numerators: list[float], denominators: list[float]) -> float:
    """The median of paired ratios: robust to a pair slowed by other work on the machine."""
    return statistics.median(a / b for a, b in zip(numerators, denominators, strict=True))


class ReadsOnly:
    """A workspace as the loop saw one before compaction: no receipt store to match effects
    against, so only reads elide and nothing is externalized."""

    def __init__(self, workspace: Any) -> None:
        self.workspace = workspace
        self.policy = workspace.policy

    @property
    def available_tools(self) -> frozenset[str]:
        return frozenset(self.workspace.available_tools)

    @property
    def modified_files(self) -> tuple[str, ...]:
        return tuple(self.workspace.modified_files)

    def execute(self, action: Any, tool_call_id: str | None = None) -> str:
        return str(self.workspace.execute(action, tool_call_id))
