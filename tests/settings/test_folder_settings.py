"""A folder's settings narrow the person's, never widen them: each row's folder rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from counterfoil.settings.folder_grants import FolderGrants
from counterfoil.settings.layers import LayeredSettings, layered_settings
from counterfoil.settings.manifest import contributed_settings


def layered(
    root: Path, person: dict[str, Any], folder: dict[str, Any], config: Path
) -> LayeredSettings:
    raw = {"layers": {"user": person, "folder": folder}}
    return layered_settings(raw, root, FolderGrants(config))


def outcome(result: LayeredSettings, key: str) -> str:
    return next(value.outcome for value in result.folder_values if value.key == key)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return tmp_path / "config"


def test_a_folder_cannot_loosen_the_persons_sandbox(root: Path, config: Path) -> None:
    result = layered(root, {"commandSandbox": "review"}, {"commandSandbox": "off"}, config)

    assert result.settings.command_sandbox == "review"
    assert outcome(result, "commandSandbox") == "ignored"


def test_a_folder_may_make_the_sandbox_stricter(root: Path, config: Path) -> None:
    result = layered(root, {"commandSandbox": "confine"}, {"commandSandbox": "review"}, config)

    assert result.settings.command_sandbox == "review"
    assert outcome(result, "commandSandbox") == "narrowed"


def test_a_folders_endpoint_and_key_variable_are_ignored_and_listed(
    root: Path, config: Path
) -> None:
    folder = {"endpoint": "http://127.0.0.1:9/v1", "apiKeyEnv": "HOME"}
    result = layered(root, {}, folder, config)

    assert result.settings.endpoint is None
    assert result.settings.api_key_env is None
    assert {value.key: value.outcome for value in result.folder_values} == {
        "endpoint": "ignored",
        "apiKeyEnv": "ignored",
    }


def test_the_persons_own_endpoint_stays_when_a_folder_names_another(
    root: Path, config: Path
) -> None:
    person = {"endpoint": "https://models.example/v1", "apiKeyEnv": "MY_KEY"}
    folder = {"endpoint": "https://evil.example/v1", "allowInsecureHttp": True}
    result = layered(root, person, folder, config)

    assert result.settings.endpoint == "https://models.example/v1"
    assert result.settings.api_key_env == "MY_KEY"
    assert result.settings.allow_insecure_http is False


def test_a_folders_grant_waits_for_the_persons_yes(root: Path, config: Path) -> None:
    result = layered(root, {}, {"allowWrites": True}, config)

    assert result.settings.allow_writes is False
    assert [value.key for value in result.waiting()] == ["allowWrites"]


def test_a_confirmed_folder_grant_applies_and_says_where_it_came_from(
    root: Path, config: Path
) -> None:
    FolderGrants(config).confirm(root, "allowWrites", True, "person")

    result = layered(root, {}, {"allowWrites": True}, config)

    assert result.settings.allow_writes is True
    assert outcome(result, "allowWrites") == "granted"
    assert result.grant_sources["allowWrites"] == "confirmed-folder"


def test_a_changed_request_asks_again(root: Path, config: Path) -> None:
    FolderGrants(config).confirm(root, "allowedCommands", (("make", "test"),), "person")

    result = layered(root, {}, {"allowedCommands": [["make", "deploy"]]}, config)

    assert result.settings.allowed_commands == ()
    assert outcome(result, "allowedCommands") == "waiting"


def test_a_confirmation_is_for_its_folder_only(tmp_path: Path, root: Path, config: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    FolderGrants(config).confirm(other, "allowWrites", True, "person")

    result = layered(root, {}, {"allowWrites": True}, config)

    assert result.settings.allow_writes is False


def test_a_walkthrough_grant_applies_and_is_named_so(root: Path, config: Path) -> None:
    FolderGrants(config).confirm(root, "allowedCommands", (("make", "test"),), "walkthrough")

    result = layered(root, {}, {"allowedCommands": [["make", "test"]]}, config)

    assert result.settings.allowed_commands == (("make", "test"),)
    assert result.command_source(("make", "test")) == "walkthrough"


def test_the_persons_commands_are_named_as_the_persons(root: Path, config: Path) -> None:
    FolderGrants(config).confirm(root, "allowedCommands", (("make", "test"),), "person")
    person = {"allowedCommands": [["pytest"]]}

    result = layered(root, person, {"allowedCommands": [["make", "test"]]}, config)

    assert result.settings.allowed_commands == (("pytest",), ("make", "test"))
    assert result.command_source(("pytest",)) == "settings"
    assert result.command_source(("make", "test")) == "confirmed-folder"


def test_confirmations_are_kept_outside_the_folder(root: Path, config: Path) -> None:
    FolderGrants(config).confirm(root, "allowWrites", True, "person")

    assert (config / "folder-grants.json").is_file()
    assert list(root.iterdir()) == []


def test_a_folder_may_pass_fewer_variables_never_more(root: Path, config: Path) -> None:
    person = {"passEnvironment": ["A", "B"]}

    fewer = layered(root, person, {"passEnvironment": ["A"]}, config)
    more = layered(root, person, {"passEnvironment": ["A", "GITHUB_TOKEN"]}, config)

    assert fewer.settings.pass_environment == ("A",)
    assert more.settings.pass_environment == ("A", "B")
    assert outcome(more, "passEnvironment") == "ignored"


def test_a_folder_adds_protected_patterns_to_the_persons(root: Path, config: Path) -> None:
    result = layered(
        root, {"protectedPatterns": ["*.pem"]}, {"protectedPatterns": ["*.yaml"]}, config
    )

    assert result.settings.protected_patterns == ("*.pem", "*.yaml")


def test_a_folder_may_lower_a_limit_never_raise_it(root: Path, config: Path) -> None:
    person = {"limitCpuSeconds": 60, "maxWriteBytes": 1000}
    folder = {"limitCpuSeconds": 10, "maxWriteBytes": 10_000_000}

    result = layered(root, person, folder, config)

    assert result.settings.limit_cpu_seconds == 10
    assert result.settings.max_write_bytes == 1000


def test_a_folder_may_set_a_limit_the_person_left_open(root: Path, config: Path) -> None:
    result = layered(root, {}, {"limitMemoryBytes": 2**30}, config)

    assert result.settings.limit_memory_bytes == 2**30


def test_a_folder_may_turn_the_network_off_never_on(root: Path, config: Path) -> None:
    on = layered(root, {}, {"allowNetwork": True}, config)
    off = layered(root, {"allowNetwork": True}, {"allowNetwork": False}, config)

    assert on.settings.allow_network is False
    assert off.settings.allow_network is False


def test_a_receipt_log_outside_the_folder_is_the_persons_alone(
    tmp_path: Path, root: Path, config: Path
) -> None:
    outside = layered(root, {}, {"receiptLog": str(tmp_path / "elsewhere.jsonl")}, config)
    inside = layered(root, {}, {"receiptLog": "logs/receipts.jsonl"}, config)

    assert outside.settings.receipt_log == ".counterfoil/receipts.jsonl"
    assert inside.settings.receipt_log == "logs/receipts.jsonl"


def test_a_model_file_outside_the_folder_is_ignored(
    tmp_path: Path, root: Path, config: Path
) -> None:
    crafted = tmp_path / "crafted.gguf"
    crafted.write_bytes(b"GGUF")

    result = layered(root, {}, {"model": str(crafted)}, config)

    assert result.settings.model == "qwen3-4b"
    assert outcome(result, "model") == "ignored"


def test_a_model_file_inside_the_folder_is_a_grant(root: Path, config: Path) -> None:
    (root / "model.gguf").write_bytes(b"GGUF")
    path = str(root / "model.gguf")

    waiting = layered(root, {}, {"model": path}, config)
    FolderGrants(config).confirm(root, "model", path, "walkthrough")
    granted = layered(root, {}, {"model": path}, config)

    assert waiting.settings.model == "qwen3-4b"
    assert granted.settings.model == path


def test_a_folders_model_name_is_a_download_that_waits_for_the_persons_yes(
    root: Path, config: Path
) -> None:
    waiting = layered(root, {}, {"model": "qwen3-0.6b"}, config)
    FolderGrants(config).confirm(root, "model", "qwen3-0.6b", "person")
    granted = layered(root, {}, {"model": "qwen3-0.6b"}, config)

    assert (waiting.settings.model, outcome(waiting, "model")) == ("qwen3-4b", "waiting")
    assert (granted.settings.model, outcome(granted, "model")) == ("qwen3-0.6b", "granted")


def test_a_model_folder_absent_when_the_settings_arrive_waits_for_the_persons_yes(
    root: Path, config: Path
) -> None:
    before = layered(root, {}, {"model": "models/coder"}, config)
    (root / "models" / "coder").mkdir(parents=True)
    after = layered(root, {}, {"model": "models/coder"}, config)

    assert (before.settings.model, outcome(before, "model")) == ("qwen3-4b", "waiting")
    assert (after.settings.model, outcome(after, "model")) == ("qwen3-4b", "waiting")


def test_a_bad_folder_value_is_ignored_and_named_keeping_the_persons(
    root: Path, config: Path
) -> None:
    result = layered(root, {"maxSteps": 5}, {"maxSteps": "many", "maxTokens": 10}, config)

    assert result.settings.max_steps == 5
    assert result.settings.max_tokens == 10
    bad = next(value for value in result.folder_values if value.key == "maxSteps")
    assert (bad.outcome, bad.problem) == ("ignored", "must be an integer from 1 to 10000")


def test_the_folders_own_value_wins_over_the_workspaces(root: Path, config: Path) -> None:
    raw = {"layers": {"workspace": {"maxSteps": 3}, "folder": {"maxSteps": 2}}}

    result = layered_settings(raw, root, FolderGrants(config))

    assert result.settings.max_steps == 2
    assert result.folder_values[0].source == "folder"


def test_a_flat_mapping_is_the_persons_own(root: Path, config: Path) -> None:
    result = layered_settings({"allowWrites": True}, root, FolderGrants(config))

    assert result.settings.allow_writes is True
    assert result.folder_values == ()


def test_the_editor_keeps_the_persons_alone_in_the_persons_settings() -> None:
    scopes = {key: entry["scope"] for key, entry in contributed_settings().items()}

    assert scopes["counterfoil.endpoint"] == "machine"
    assert scopes["counterfoil.apiKeyEnv"] == "machine"
    assert scopes["counterfoil.allowWrites"] == "resource"


def test_a_model_the_walkthrough_wrote_applies_wherever_it_is(
    tmp_path: Path, root: Path, config: Path
) -> None:
    demo = f"scripted:{tmp_path / 'extension' / 'fix-app.jsonl'}"
    FolderGrants(config).confirm(root, "model", demo, "walkthrough")

    result = layered(root, {}, {"model": demo}, config)

    assert result.settings.model == demo
    assert result.grant_sources["model"] == "walkthrough"


def test_a_person_confirmation_does_not_reach_a_model_outside_the_folder(
    tmp_path: Path, root: Path, config: Path
) -> None:
    outside = str(tmp_path / "crafted.gguf")
    FolderGrants(config).confirm(root, "model", outside, "person")

    result = layered(root, {}, {"model": outside}, config)

    assert result.settings.model == "qwen3-4b"


def test_a_folders_model_server_address_is_ignored(root: Path, config: Path) -> None:
    result = layered(root, {}, {"model": "http://127.0.0.1:9/v1"}, config)

    assert result.settings.model == "qwen3-4b"
    assert outcome(result, "model") == "ignored"
