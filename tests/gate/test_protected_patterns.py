"""A person can protect more than the built-in list: a policy field and the CLI's --protect."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from counterfoil import ToolPolicy
from counterfoil.cli.main import main
from counterfoil.files.paths import protection_rule


def test_protected_patterns_default_to_none(tmp_path: Path) -> None:
    assert ToolPolicy(tmp_path).protected_patterns == ()


@pytest.mark.parametrize("patterns", [["*.yaml"], ("",), ("a\0b",), (3,), "*.yaml"])
def test_protected_patterns_must_be_a_tuple_of_non_empty_strings(
    tmp_path: Path, patterns: object
) -> None:
    with pytest.raises(ValueError, match="^protected patterns must be a tuple of non-empty"):
        ToolPolicy(tmp_path, protected_patterns=patterns)  # type: ignore[arg-type]


def test_the_protect_flag_keeps_matching_files_from_the_model(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "deploy.yaml").write_text("password: hunter2\n")
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps({"tool": "read_file", "path": "deploy.yaml"})
        + "\n"
        + json.dumps({"final": "done"})
        + "\n"
    )
    output = io.StringIO()
    main(
        [
            "agent",
            "read it",
            "--root",
            str(project),
            "--model",
            f"scripted:{script}",
            "--protect",
            "*.yml",
            "--protect",
            "*.YAML",
        ],
        stdin=io.StringIO(),
        stdout=output,
    )

    assert "error: path is not accessible" in output.getvalue()
    assert "hunter2" not in output.getvalue()


def test_the_person_is_told_which_rule_protects_a_path() -> None:
    assert protection_rule(".env") == "the built-in name .env"
    assert protection_rule("config/.env.local") == "the built-in pattern .env*"
    assert protection_rule("deploy/prod.yaml", ("deploy/*.yaml",)) == (
        "your protected pattern deploy/*.yaml"
    )
    assert protection_rule("app.py") is None
