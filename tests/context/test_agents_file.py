"""The root's AGENTS.md: read under the gate's path rules, bounded, put last in the system
prompt, its digest shown; nested ones are ordinary files; a setting turns it off."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import pytest
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, run_agent
from counterfoil.cli.main import main
from counterfoil.context.agents_file import MAX_AGENTS_FILE_BYTES, AgentsFile, read_agents_file
from counterfoil.settings.table import Settings

RULES = "Run the tests with `python -m pytest -q` before you finish.\n"


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def agents_file(root: Path, **policy: object) -> AgentsFile | None:
    return read_agents_file(make_workspace(root, **policy), root)


def test_the_root_agents_file_is_read_with_its_digest(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text(RULES)
    found = agents_file(tmp_path)
    assert found == AgentsFile(
        text=RULES, sha256=hashlib.sha256(RULES.encode()).hexdigest(), size=len(RULES)
    )


def test_it_goes_last_into_the_system_prompt(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text(RULES)
    found = agents_file(tmp_path)
    assert found is not None
    model = RecordingModel({"final": "done"})
    run_agent("look", model, make_workspace(tmp_path), AgentLimits(), instructions=found.text)
    quoted = "\n".join(f"> {line}".rstrip() for line in RULES.rstrip("\n").splitlines())
    # Quoted line by line, so its words read as rules, not as text for a file.
    assert model.calls[0][0]["content"].endswith("\n" + quoted)


def test_without_one_there_is_nothing(tmp_path: Path) -> None:
    assert agents_file(tmp_path) is None


def test_a_nested_agents_file_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "AGENTS.md").write_text(RULES)
    assert agents_file(tmp_path) is None


def test_a_protected_agents_file_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text(RULES)
    found = agents_file(tmp_path, protected_patterns=("agents.*",))
    assert found == AgentsFile(not_read="protected")


def test_a_symlinked_agents_file_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.md").write_text(RULES)
    os.symlink(tmp_path / "elsewhere.md", tmp_path / "AGENTS.md")
    assert agents_file(tmp_path) == AgentsFile(not_read="protected")


def test_an_oversized_agents_file_is_not_read_at_all(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("a" * (MAX_AGENTS_FILE_BYTES + 1))
    assert agents_file(tmp_path) == AgentsFile(not_read="too large")
    (tmp_path / "AGENTS.md").write_text("a" * MAX_AGENTS_FILE_BYTES)
    found = agents_file(tmp_path)
    assert found is not None and found.size == MAX_AGENTS_FILE_BYTES


def test_the_cli_header_shows_the_digest_and_the_setting_turns_it_off(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text(RULES)
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"final": "done"}) + "\n")
    args = ["agent", "look", "--root", str(tmp_path), "--model", f"scripted:{script}"]
    digest = hashlib.sha256(RULES.encode()).hexdigest()
    output = io.StringIO()
    main(args, stdin=io.StringIO(""), stdout=output)
    assert f"agents file: AGENTS.md sha256 {digest} ({len(RULES)} bytes)\n" in output.getvalue()
    output = io.StringIO()
    main([*args, "--no-agents-file"], stdin=io.StringIO(""), stdout=output)
    assert "agents file:" not in output.getvalue()


def test_the_setting_is_on_by_default() -> None:
    assert Settings().agents_file is True
    assert Settings.from_mapping({"agentsFile": False}).agents_file is False
