"""The daemon's command settings: variables passed through and resource limits, off by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfoil.commands.runner import ResourceLimits
from counterfoil.lsp.settings import SettingsError, parse_settings


def test_commands_get_no_extra_variables_and_no_limits_by_default(tmp_path: Path) -> None:
    policy = parse_settings({}).policy(tmp_path)

    assert policy.pass_environment == ()
    assert policy.command_limits == ResourceLimits()


def test_pass_environment_and_limits_reach_the_policy(tmp_path: Path) -> None:
    settings = parse_settings(
        {
            "passEnvironment": ["GITHUB_TOKEN", "NPM_TOKEN"],
            "limitCpuSeconds": 60,
            "limitMemoryBytes": 2**30,
            "limitProcesses": 256,
        }
    )
    policy = settings.policy(tmp_path)

    assert policy.pass_environment == ("GITHUB_TOKEN", "NPM_TOKEN")
    assert policy.command_limits == ResourceLimits(60, 2**30, 256)


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({"passEnvironment": "GITHUB_TOKEN"}, "passEnvironment"),
        ({"passEnvironment": ["A=B"]}, "passEnvironment"),
        ({"limitCpuSeconds": 0}, "limitCpuSeconds"),
        ({"limitMemoryBytes": 1.5}, "limitMemoryBytes"),
        ({"limitProcesses": True}, "limitProcesses"),
    ],
)
def test_invalid_command_settings_are_refused_naming_the_key(
    raw: dict[str, object], named: str
) -> None:
    with pytest.raises(SettingsError, match=named):
        parse_settings(raw)
