"""The person's settings are checked one by one: a bad value is refused alone."""

from __future__ import annotations

import pytest

from counterfoil.settings.layers import layered_settings
from counterfoil.settings.refused import checked_one_by_one, unchosen_model
from counterfoil.settings.table import Settings, SettingsError


def test_a_bad_value_keeps_every_other_value_as_set() -> None:
    settings, _ = checked_one_by_one(
        {"maxSteps": -5, "model": "qwen3-1.7b", "protectedPatterns": ["*.env"]}
    )

    assert (settings.model, settings.protected_patterns) == ("qwen3-1.7b", ("*.env",))
    assert settings.max_steps == Settings().max_steps


def test_a_bad_value_keeps_the_persons_last_valid_value() -> None:
    before, _ = checked_one_by_one({"maxSteps": 3})

    settings, refused = checked_one_by_one({"maxSteps": -5}, before)

    assert settings.max_steps == 3
    assert [item.line() for item in refused] == [
        "maxSteps must be an integer from 1 to 10000; using 3 (your last valid value)"
    ]


def test_a_refused_key_variable_is_not_echoed() -> None:
    _, refused = checked_one_by_one({"apiKeyEnv": "sk-secret-value"})

    assert "sk-secret-value" not in refused[0].line()


def test_a_refused_value_of_the_persons_layer_is_listed_beside_the_folders() -> None:
    layered = layered_settings(
        {"layers": {"user": {"maxSteps": "many"}, "folder": {"maxSteps": 2}}}, None
    )

    assert [item.key for item in layered.refused] == ["maxSteps"]
    assert layered.settings.max_steps == 2  # the folder's lower limit still narrows


def test_a_refused_endpoint_left_at_its_default_is_a_model_not_chosen() -> None:
    _, refused = checked_one_by_one({"endpoint": "not a url", "maxSteps": 0})

    unchosen = unchosen_model(refused)

    assert unchosen is not None and unchosen.key == "endpoint"


def test_settings_that_are_no_object_are_refused_whole() -> None:
    with pytest.raises(SettingsError, match="must be an object"):
        checked_one_by_one(["maxSteps"])


def test_a_refused_value_says_what_is_used_as_the_person_writes_it() -> None:
    _, refused = checked_one_by_one({"approvalRules": 5})

    assert refused[0].line().endswith("; using [] (the default)")
