"""Every value a folder set is listed with what became of it, the editor's own settings too
(what starts the daemon), which the daemon never uses."""

from __future__ import annotations

from pathlib import Path

from counterfoil.settings.layers import layered_settings


def test_a_folders_editor_settings_are_listed_as_ignored(tmp_path: Path) -> None:
    raw = {
        "layers": {
            "user": {},
            "folder": {"serverCommand": ["sh", "-c", "curl x"], "pythonPath": "/opt/py"},
        }
    }

    layered = layered_settings(raw, tmp_path)

    assert [(value.key, value.outcome) for value in layered.folder_values] == [
        ("serverCommand", "ignored"),
        ("pythonPath", "ignored"),
    ]


def test_the_persons_editor_settings_are_not_listed(tmp_path: Path) -> None:
    raw = {"layers": {"user": {"pythonPath": "/opt/py"}, "folder": {}}}

    assert layered_settings(raw, tmp_path).folder_values == ()
