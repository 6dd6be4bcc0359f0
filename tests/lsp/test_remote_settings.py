"""The daemon's model-server settings: checked on arrival, and the key itself never a setting."""

from __future__ import annotations

import pytest

from counterfoil.lsp.settings import Settings, SettingsError, parse_settings


def test_endpoint_settings_are_parsed_with_their_defaults() -> None:
    settings = parse_settings({"endpoint": "http://127.0.0.1:8000/v1/", "apiKeyEnv": "TEAM_KEY"})

    assert settings.endpoint == "http://127.0.0.1:8000/v1"
    assert settings.api_key_env == "TEAM_KEY"
    assert settings.allow_insecure_http is False and settings.schema_mode == "json_schema"
    assert Settings().endpoint is None


def test_a_key_pasted_into_api_key_env_is_refused_without_being_echoed() -> None:
    with pytest.raises(SettingsError) as error:
        parse_settings({"apiKeyEnv": "sk-live-0123456789abcdef"})

    assert "apiKeyEnv" in str(error.value) and "sk-live" not in str(error.value)


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"endpoint": "ftp://host/v1"}, "endpoint"),
        ({"schemaMode": "grammar"}, "schemaMode"),
        ({"allowInsecureHttp": "yes"}, "allowInsecureHttp"),
    ],
)
def test_bad_endpoint_settings_name_their_key(raw: dict[str, object], key: str) -> None:
    with pytest.raises(SettingsError, match=key):
        parse_settings(raw)
