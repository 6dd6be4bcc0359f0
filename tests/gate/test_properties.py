"""Arbitrary model input at the gate: nothing raises, nothing outside the root is touched."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.workspaces import make_workspace

from counterfoil import AgentError, ToolAction, ToolPolicy, parse_action
from counterfoil.actions import KNOWN_TOOLS

SECRET = "outside-secret-7d1f0c"
ALLOWED = ("python", "-c", "print('checked')")

path_parts = st.sampled_from(
    [
        "..",
        ".",
        "",
        "/",
        "a.py",
        "sub",
        "link",
        "dirlink",
        "outside",
        ".git",
        ".env",
        "id_rsa",
        "x.pem",
        "NOTES.md",
        "fifo",
        "\0",
        "a" * 300,
        "sub/..",
        "~",
        "//",
    ]
)
paths = st.one_of(
    st.lists(path_parts, min_size=1, max_size=4).map("/".join),
    st.text(max_size=40),
    st.sampled_from(
        [
            "/etc/passwd",
            "../outside/secret.txt",
            "link/secret.txt",
            "dirlink/secret.txt",
            "sub/../../outside/secret.txt",
        ]
    ),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)
argument_values = st.one_of(
    paths, json_values, st.lists(st.text(max_size=10), max_size=4), st.just(list(ALLOWED))
)
arguments = st.dictionaries(
    st.sampled_from(["path", "content", "old", "new", "argv", "extra"]),
    argument_values,
    max_size=4,
)
tools = st.one_of(st.sampled_from(sorted(KNOWN_TOOLS)), st.text(max_size=12))


@contextmanager
def sandbox() -> Iterator[tuple[Path, Path]]:
    """A root with tempting symlinks and a FIFO, beside an outside folder holding a secret."""
    with tempfile.TemporaryDirectory() as parent:
        base = Path(parent)
        outside, root = base / "outside", base / "root"
        outside.mkdir()
        root.mkdir()
        (outside / "secret.txt").write_text(SECRET)
        (root / "a.py").write_text("value = 1\n")
        (root / "sub").mkdir()
        (root / "link").symlink_to(outside / "secret.txt")
        (root / "dirlink").symlink_to(outside)
        os.mkfifo(root / "fifo")
        yield root, outside


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file() and not path.is_symlink()
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(tools, arguments), min_size=1, max_size=6))
def test_execute_never_raises_and_never_leaves_the_root(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    with sandbox() as (root, outside):
        before = snapshot(outside)
        policy = ToolPolicy(
            root, allow_writes=True, allowed_commands=(ALLOWED,), command_timeout_seconds=10
        )
        workspace = make_workspace(policy, confirm_tool=lambda _action: True)
        workspace.read_file("a.py")
        for tool, args in calls:
            result = workspace.execute(ToolAction(tool, args))
            assert isinstance(result, str)
            assert SECRET not in result
        assert snapshot(outside) == before
        assert (root / "link").is_symlink() and (root / "dirlink").is_symlink()
        for modified in workspace.modified_files:
            assert (root / modified).resolve().is_relative_to(root.resolve())


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=80),
        json_values.map(json.dumps),
        st.tuples(tools, arguments).map(lambda pair: json.dumps({"tool": pair[0], **pair[1]})),
    )
)
def test_parse_action_raises_only_agent_errors(response: str) -> None:
    try:
        parse_action(response, frozenset({"read_file", "list_files"}))
    except AgentError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.none(), st.integers(), st.text(max_size=8), st.lists(st.text(max_size=3))))
def test_execute_refuses_anything_that_is_not_a_tool_action(action: object) -> None:
    with sandbox() as (root, _outside):
        workspace = make_workspace(root, confirm_tool=lambda _a: True, allow_writes=True)
        assert workspace.execute(action).startswith("error: ")


def test_the_sandbox_really_tempts_the_gate() -> None:
    """Guards the properties above: the symlinks do lead outside when followed naively."""
    with sandbox() as (root, _outside):
        assert (root / "link").read_text() == SECRET
        assert (root / "dirlink" / "secret.txt").read_text() == SECRET
        assert sys.platform.startswith("linux")
