"""A policy is one existing real directory plus limits that are checked on creation."""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import pytest

from counterfoil import ToolPolicy

LIMIT_FIELDS = ("max_file_bytes", "max_list_entries", "max_write_bytes")


def test_defaults(tmp_path: Path) -> None:
    policy = ToolPolicy(tmp_path)
    assert policy.max_file_bytes == 64 * 1024
    assert policy.max_list_entries == 200
    assert policy.allow_writes is False
    assert policy.allowed_commands == ()
    assert policy.max_write_bytes == 64 * 1024
    assert policy.command_timeout_seconds == 30.0


def test_policy_is_frozen(tmp_path: Path) -> None:
    policy = ToolPolicy(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.allow_writes = True  # type: ignore[misc]


def test_root_is_stored_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")
    policy = ToolPolicy(Path("..") / "other" / ".." / "project")
    assert policy.root == (tmp_path / "project").resolve()
    assert policy.root.is_absolute()
    assert ".." not in policy.root.parts


def test_missing_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exist"):
        ToolPolicy(tmp_path / "missing")


def test_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "file.txt"
    file.write_text("x")
    with pytest.raises(ValueError, match="directory"):
        ToolPolicy(file)


def test_root_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    with pytest.raises(ValueError, match="symlink"):
        ToolPolicy(tmp_path / "link")


@pytest.mark.parametrize("field", LIMIT_FIELDS)
@pytest.mark.parametrize("value", [0, -1, True, False, 1.5, 10.0, "10", None])
def test_size_limits_must_be_positive_integers(tmp_path: Path, field: str, value: object) -> None:
    with pytest.raises(ValueError, match="workspace limits must be positive integers"):
        ToolPolicy(tmp_path, **{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("field", LIMIT_FIELDS)
def test_size_limit_of_one_is_accepted(tmp_path: Path, field: str) -> None:
    assert getattr(ToolPolicy(tmp_path, **{field: 1}), field) == 1  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [1, 0, "yes", None])
def test_allow_writes_must_be_a_boolean(tmp_path: Path, value: object) -> None:
    with pytest.raises(ValueError, match="allow_writes must be a boolean"):
        ToolPolicy(tmp_path, allow_writes=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0, 0.0, -1, -0.5, math.nan, math.inf, -math.inf, "30", None])
def test_command_timeout_must_be_finite_and_positive(tmp_path: Path, value: object) -> None:
    with pytest.raises(ValueError, match="command timeout must be finite and positive"):
        ToolPolicy(tmp_path, command_timeout_seconds=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0.25, 5])
def test_positive_timeouts_are_accepted(tmp_path: Path, value: float) -> None:
    assert ToolPolicy(tmp_path, command_timeout_seconds=value).command_timeout_seconds == value


@pytest.mark.parametrize(
    "commands",
    [
        [("python", "validate.py")],
        (["python", "validate.py"],),
        ("python", "validate.py"),
        "python validate.py",
        None,
    ],
)
def test_allowed_commands_must_be_a_tuple_of_tuples(tmp_path: Path, commands: object) -> None:
    with pytest.raises(ValueError, match="allowed commands must be a tuple of tuples"):
        ToolPolicy(tmp_path, allowed_commands=commands)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "commands",
    [
        ((),),
        (("",),),
        (("python", ""),),
        (("python", "-c", "print(1)\0"),),
        (("python", 1),),
        (("python", "validate.py"), ()),
    ],
)
def test_allowed_commands_must_contain_non_empty_strings_without_nul(
    tmp_path: Path, commands: object
) -> None:
    with pytest.raises(
        ValueError, match="allowed commands must contain non-empty strings without NUL"
    ):
        ToolPolicy(tmp_path, allowed_commands=commands)  # type: ignore[arg-type]


def test_valid_allowed_commands_are_kept(tmp_path: Path) -> None:
    commands = (("python", "validate.py"), ("python", "-m", "pytest", "-q"))
    assert ToolPolicy(tmp_path, allowed_commands=commands).allowed_commands == commands
