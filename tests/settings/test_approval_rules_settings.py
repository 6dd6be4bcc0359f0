"""`approvalRules` in the editor's settings: the person's rules apply, a folder may put ask and
deny rules before them, never an allow, and a bad rule is named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from counterfoil.gate.rules import RuleEffect
from counterfoil.settings.folder_grants import FolderGrants
from counterfoil.settings.layers import LayeredSettings, layered_settings
from counterfoil.settings.table import Settings, SettingsError

TESTS = {"decision": "allow", "argvPrefix": ["python3", "-m", "pytest"]}
RUN_TESTS = RuleEffect("run_command", argv=("python3", "-m", "pytest", "-q"))


def layered(root: Path, person: list[Any], folder: list[Any]) -> LayeredSettings:
    raw = {"layers": {"user": {"approvalRules": person}, "folder": {"approvalRules": folder}}}
    return layered_settings(raw, root, FolderGrants(root / "config"))


def test_the_persons_rules_are_read_from_their_settings() -> None:
    settings = Settings.from_mapping({"approvalRules": [TESTS]})

    assert settings.approval_rules.decide(RUN_TESTS).decision == "allow"


def test_no_rules_by_default() -> None:
    assert Settings().approval_rules.rules == ()


def test_a_bad_rule_is_named_in_one_sentence() -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_mapping({"approvalRules": [TESTS, {"decision": "allow", "argv": "ls -l"}]})

    assert raised.value.problems == (
        "approvalRules rule 2: argv must be a list of non-empty strings without NUL",
    )


def test_a_folder_that_adds_an_allow_is_ignored_whole(tmp_path: Path) -> None:
    folder = [{"decision": "deny", "argv": ["rm"]}, {"decision": "allow", "argv": ["curl"]}]

    result = layered(tmp_path, [TESTS], folder)

    assert [rule.as_record() for rule in result.settings.approval_rules.rules] == [TESTS]
    [value] = result.folder_values
    assert (value.key, value.outcome) == ("approvalRules", "ignored")


def test_a_folders_deny_comes_before_the_persons_allow(tmp_path: Path) -> None:
    folder = [{"decision": "deny", "argvPrefix": ["python3", "-m", "pytest", "-q"]}]

    result = layered(tmp_path, [TESTS], folder)

    assert result.settings.approval_rules.decide(RUN_TESTS).decision == "deny"
    assert [value.outcome for value in result.folder_values] == ["narrowed"]


def test_the_documented_examples_are_rules() -> None:
    document = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text()
    section = document.split("## Approval rules", 1)[1]
    examples = [block.split("```", 1)[0] for block in section.split("```json\n")[1:]]

    assert len(examples) == 3
    for example in examples:
        assert Settings.from_mapping({"approvalRules": json.loads(example)}).approval_rules.rules
