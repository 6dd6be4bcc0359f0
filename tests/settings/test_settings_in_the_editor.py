"""Settings are written once, in the settings table: the editor's contributed configuration
and the CLI's flags are made from it, and the editor sends every key it contributes."""

from __future__ import annotations

import json
from dataclasses import fields

from tests.conftest import REPOSITORY

from counterfoil.cli.main import build_parser
from counterfoil.cli.setting_flags import SETTING_FLAGS
from counterfoil.settings.manifest import contributed_settings, folder_rule_table
from counterfoil.settings.table import Settings

EXTENSION = REPOSITORY / "extension"


def contributed() -> dict[str, object]:
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    properties: dict[str, object] = manifest["contributes"]["configuration"]["properties"]
    return properties


def test_the_extensions_configuration_is_the_settings_table() -> None:
    properties = contributed()
    generated = contributed_settings()
    stale = sorted(key for key, entry in generated.items() if properties.get(key) != entry)
    assert stale == [], "run python -m counterfoil.settings.manifest, then npm run format"


def test_writes_and_commands_can_be_allowed_for_one_workspace_folder() -> None:
    properties = contributed()
    for key in ("counterfoil.allowWrites", "counterfoil.allowedCommands"):
        assert properties[key]["scope"] == "resource", key  # type: ignore[index]


def test_the_editor_sends_every_contributed_setting_but_its_own() -> None:
    source = (EXTENSION / "src" / "daemon" / "settings.ts").read_text(encoding="utf-8")
    assert 'import manifest from "../../package.json";' in source
    assert 'EDITOR_SETTING_KEYS = ["serverCommand", "pythonPath"]' in source
    editor_only = {"counterfoil.serverCommand", "counterfoil.pythonPath"}
    assert set(contributed()) - editor_only == set(contributed_settings())


def test_every_flag_of_the_table_is_a_cli_flag_for_its_setting() -> None:
    agent = build_parser()._subparsers._group_actions[0].choices["agent"]  # type: ignore[union-attr]
    flags = {option: action.dest for action in agent._actions for option in action.option_strings}
    assert SETTING_FLAGS == {
        item.metadata["key"]: item.metadata["flag"]
        for item in fields(Settings)
        if item.metadata["flag"] is not None
    }
    assert all(flags[flag] == key for key, flag in SETTING_FLAGS.items())


def test_the_settings_document_states_each_settings_folder_rule() -> None:
    document = (REPOSITORY / "docs" / "settings.md").read_text(encoding="utf-8")

    assert folder_rule_table() in document, "run python -m counterfoil.settings.manifest"
