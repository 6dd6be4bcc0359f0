"""The edit preview's WorkspaceEdit, applied to the base as an LSP client applies it, gives
exactly the bytes whose digest the daemon will write."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from counterfoil.actions import ToolAction
from counterfoil.lsp.approvals.confirm_messages import preview
from counterfoil.lsp.approvals.edit_preview import lines_of
from counterfoil.proposals import EditProposal


def offset(text: str, position: dict[str, int]) -> int:
    """A position's index in `text`, by LSP's rules: lines end at \\r\\n, \\n or \\r, and
    characters are UTF-16 code units; a position past the end is the end."""
    lines = lines_of(text)
    if position["line"] >= len(lines):
        return len(text)
    start = sum(len(line) for line in lines[: position["line"]])
    line, units, index = lines[position["line"]], 0, 0
    while index < len(line) and units < position["character"]:
        units += len(line[index].encode("utf-16-le")) // 2
        index += 1
    return start + index


def apply(text: str, edits: list[dict[str, Any]]) -> str:
    """Apply non-overlapping edits, all positioned in the original text, last first."""
    spans = sorted(
        ((offset(text, e["range"]["start"]), offset(text, e["range"]["end"]), e) for e in edits),
        key=lambda span: span[0],
        reverse=True,
    )
    for start, end, edit in spans:
        text = text[:start] + edit["newText"] + text[end:]
    return text


def edit_preview(tmp_path: Path, base: str | None, proposed: str) -> dict[str, Any]:
    digest = hashlib.sha256(proposed.encode("utf-8")).hexdigest()
    proposal = EditProposal(
        tool_call_id="call-1",
        action=ToolAction("write_file", {"path": "app.py", "content": proposed}),
        path="app.py",
        base_text=base,
        base_sha256=None if base is None else hashlib.sha256(base.encode()).hexdigest(),
        proposed_text=proposed,
        proposed_sha256=digest,
    )
    return preview(proposal, tmp_path)


def applied_digest(shown: dict[str, Any]) -> str:
    (document,) = [c for c in shown["edit"]["documentChanges"] if "edits" in c]
    text = apply(shown["baseText"] or "", document["edits"])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("base", "proposed"),
    [
        ("def double(x):\n    return x * 1\n", "def double(x):\n    return x * 2\n"),
        ("a\nb\nc", "a\nB\nc\nd"),  # no newline at the end, and lines added after it
        ("a\r\nb\r\n", "a\r\nb\r\nc\r\n"),
        ("one\rtwo\r", "one\rthree\r"),
        ("é😀x\n", "é😀y\n"),  # characters outside the BMP count two UTF-16 units
        ("keep\n", ""),
        ("", "new\n"),
        ("same\n", "same\n"),
    ],
)
def test_the_edits_applied_to_the_base_give_the_proposed_digest(
    tmp_path: Path, base: str, proposed: str
) -> None:
    shown = edit_preview(tmp_path, base, proposed)
    assert applied_digest(shown) == shown["proposedSha256"]


def test_each_changed_run_of_lines_is_its_own_edit(tmp_path: Path) -> None:
    base = "".join(f"line {n}\n" for n in range(10))
    proposed = base.replace("line 1\n", "LINE 1\n").replace("line 8\n", "LINE 8\n")

    shown = edit_preview(tmp_path, base, proposed)

    (document,) = shown["edit"]["documentChanges"]
    assert [e["newText"] for e in document["edits"]] == ["LINE 1\n", "LINE 8\n"]
    assert document["textDocument"]["uri"] == shown["uri"]


def test_a_new_file_is_created_then_filled_with_one_insert(tmp_path: Path) -> None:
    shown = edit_preview(tmp_path, None, "print('hi')\n")

    create, document = shown["edit"]["documentChanges"]
    assert create == {"kind": "create", "uri": shown["uri"]}
    assert document["edits"] == [
        {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "newText": "print('hi')\n",
        }
    ]
    assert applied_digest(shown) == shown["proposedSha256"]


@given(
    st.lists(st.sampled_from(["a\n", "b\n", "c", "\r\n", "😀\n", "é", "\r", "x y\n"]), max_size=12),
    st.lists(st.sampled_from(["a\n", "b\n", "c", "\r\n", "😀\n", "é", "\r", "z\n"]), max_size=12),
)
def test_any_change_round_trips_through_its_edits(base: list[str], proposed: list[str]) -> None:
    shown = edit_preview(Path("/work"), "".join(base), "".join(proposed))
    assert applied_digest(shown) == shown["proposedSha256"]
