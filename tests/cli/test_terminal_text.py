"""Model-chosen text reaches the terminal with its control characters shown, never obeyed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.terminal import run_cli

import counterfoil.models
from counterfoil.cli.terminal_text import terminal_safe
from counterfoil.model import Messages
from counterfoil.models import ModelProgress
from counterfoil.models.scripted import ScriptedModel

HIDDEN = ("\x1b", "\x07", "\x08", "\r", "\x7f", "\x9b", "\u202e", "\u2066", "\u200f")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text\n\tindented\n", "plain text\n\tindented\n"),
        ("\x1b[2K\x1b[1G", "\\x1b[2K\\x1b[1G"),
        ("bell\x07 back\x08 cr\r del\x7f nul\x00", "bell\\x07 back\\x08 cr\\x0d del\\x7f nul\\x00"),
        ("csi\x9b31m next\x85", "csi\\x9b31m next\\x85"),
        ("a\u202eb\u2066c\u2069d\u202ae", "a<U+202E>b<U+2066>c<U+2069>d<U+202A>e"),
        ("mark\u200e\u200f\u061c", "mark<U+200E><U+200F><U+061C>"),
        ("café ✓ 日本", "café ✓ 日本"),
    ],
)
def test_control_and_bidi_characters_are_shown_as_visible_escapes(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def assert_nothing_hidden(output: str) -> None:
    assert not [character for character in HIDDEN if character in output]


def scripted(path: Path, *responses: dict[str, Any]) -> str:
    path.write_text("".join(json.dumps(response) + "\n" for response in responses))
    return f"scripted:{path}"


def test_the_cli_escapes_model_chosen_text_in_diffs_paths_observations_and_answers(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("\x1b[31mred\x9b\n")
    model = scripted(
        tmp_path / "script.jsonl",
        {"tool": "read_file", "path": "notes.txt"},
        {"tool": "write_file", "path": "app.sh", "content": "x = 1\n\x1b[2K\x1b[1Gsafe = True\n"},
        {"tool": "write_file", "path": "\u202egnp.py", "content": "y = 1\r\n"},
        {"final": "done \x1b]0;title\x07 \u202e"},
    )
    _, output = run_cli(
        ["agent", "go", "--root", str(project), "--allow-writes", "--model", model], "y\ny\n"
    )

    assert_nothing_hidden(output)
    assert "\\x1b[31mred\\x9b" in output
    assert "+\\x1b[2K\\x1b[1Gsafe = True\n" in output
    assert "b/<U+202E>gnp.py" in output
    assert "+y = 1\\x0d\n" in output
    assert "done \\x1b]0;title\\x07 <U+202E>" in output
    assert (project / "app.sh").read_text() == "x = 1\n\x1b[2K\x1b[1Gsafe = True\n"

    _, shown = run_cli(["receipts", "show", str(project / ".counterfoil" / "receipts.jsonl")])
    assert_nothing_hidden(shown)
    assert "<U+202E>gnp.py" in shown


def test_the_cli_escapes_streamed_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def load_generate(_spec: str, _options: object = None, *, on_progress: Any) -> Any:
        class Streaming(ScriptedModel):
            def __call__(self, messages: Messages) -> str:
                for token in ('{"final": "', "\x1b[2", "J\u202e", '"}'):
                    on_progress(ModelProgress("generating", text=token))
                return super().__call__(messages)

        return Streaming(['{"final": "done"}'])

    monkeypatch.setattr(counterfoil.models, "load_generate", load_generate)
    _, output = run_cli(["agent", "go", "--root", str(tmp_path), "--model", "streaming"])

    assert_nothing_hidden(output)
    assert '{"final": "\\x1b[2J<U+202E>"}' in output
