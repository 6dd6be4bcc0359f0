"""Optional resource limits on a command: off unless asked for, then set in the command itself."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from counterfoil.commands.runner import ResourceLimits, run_bounded
from counterfoil.gate.policy import ToolPolicy

PRINT_LIMITS = (
    "import resource\n"
    "for name in ('RLIMIT_CPU', 'RLIMIT_AS', 'RLIMIT_NPROC'):\n"
    "    print(resource.getrlimit(getattr(resource, name))[0])\n"
)


def test_no_limit_is_set_by_default(tmp_path: Path) -> None:
    import resource

    expected = [
        resource.getrlimit(getattr(resource, name))[0]
        for name in ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NPROC")
    ]
    result = run_bounded([sys.executable, "-c", PRINT_LIMITS], tmp_path, 30.0)

    assert [int(line) for line in result.output.split()] == expected


def test_the_limits_asked_for_are_the_command_s_limits(tmp_path: Path) -> None:
    limits = ResourceLimits(cpu_seconds=7, memory_bytes=2**31, processes=123)
    result = run_bounded([sys.executable, "-c", PRINT_LIMITS], tmp_path, 30.0, limits=limits)

    assert result.output.split() == ["7", str(2**31), "123"]


def test_a_command_over_its_cpu_limit_is_stopped_before_its_timeout(tmp_path: Path) -> None:
    result = run_bounded(
        [sys.executable, "-c", "while True: pass"],
        tmp_path,
        600.0,
        limits=ResourceLimits(cpu_seconds=1),
    )

    # A signal from the CPU limit, not the timeout (which leaves no status).
    assert result.status in (-signal.SIGXCPU, -signal.SIGKILL)


def test_a_command_over_its_memory_limit_fails_to_allocate(tmp_path: Path) -> None:
    script = "data = bytearray(1024 * 1024 * 1024)\nprint('allocated')"
    result = run_bounded(
        [sys.executable, "-c", script],
        tmp_path,
        30.0,
        limits=ResourceLimits(memory_bytes=512 * 1024 * 1024),
    )

    assert result.status == 1
    assert "MemoryError" in result.output


def test_the_policy_sets_no_limits_by_default_and_checks_them(tmp_path: Path) -> None:
    assert ToolPolicy(tmp_path).command_limits == ResourceLimits()
    policy = ToolPolicy(tmp_path, limit_cpu_seconds=5, limit_processes=50)
    assert policy.command_limits == ResourceLimits(cpu_seconds=5, processes=50)
    with pytest.raises(ValueError, match="command limits must be positive integers"):
        ToolPolicy(tmp_path, limit_memory_bytes=0)
