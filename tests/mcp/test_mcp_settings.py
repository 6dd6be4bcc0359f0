"""The `mcpServers` setting: the person's servers, each stdio or streamable HTTP, checked whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfoil.mcp.servers import McpServer
from counterfoil.settings.layers import layered_settings
from counterfoil.settings.manifest import contributed_settings
from counterfoil.settings.table import Settings, SettingsError


def test_a_stdio_and_an_http_server_are_read_from_the_settings() -> None:
    settings = Settings.from_mapping(
        {
            "mcpServers": [
                {"name": "files", "command": ["python", "s.py"], "readOnlyTools": ["read"]},
                {"name": "docs", "url": "https://example.org/mcp", "startTimeoutSeconds": 5},
            ]
        }
    )

    assert settings.mcp_servers == (
        McpServer("files", command=("python", "s.py"), read_only_tools=("read",)),
        McpServer("docs", url="https://example.org/mcp", start_timeout_seconds=5.0),
    )


def test_the_terminal_flag_gives_the_servers_as_json_text() -> None:
    settings = Settings.from_mapping({"mcpServers": '[{"name": "f", "command": ["srv"]}]'})

    assert settings.mcp_servers[0].command == ("srv",)


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "both", "command": ["a"], "url": "https://x"},
        {"name": "neither"},
        {"name": "bad name!", "command": ["a"]},
        {"name": "f", "command": ["a"], "network": "yes"},
        {"name": "f", "command": ["a"], "sandbox": "off"},
        {"name": "f", "url": "file:///etc/passwd"},
        {"name": "f", "command": ["a"], "timeoutSeconds": 0},
        {"name": "f", "command": ["a"], "startTimeoutSeconds": -1},
    ],
)
def test_an_entry_that_cannot_be_used_refuses_the_settings(entry: dict[str, object]) -> None:
    with pytest.raises(SettingsError, match=r"mcpServers\[0\]"):
        Settings.from_mapping({"mcpServers": [entry]})


def test_two_servers_with_one_name_are_refused() -> None:
    entry = {"name": "f", "command": ["a"]}

    with pytest.raises(SettingsError, match="names a server twice"):
        Settings.from_mapping({"mcpServers": [entry, entry]})


def test_the_editor_offers_the_setting_only_in_user_settings() -> None:
    assert contributed_settings()["counterfoil.mcpServers"]["scope"] == "machine"


def test_a_folders_servers_are_ignored(tmp_path: Path) -> None:
    entry = {"name": "f", "command": ["a"]}

    layered = layered_settings({"layers": {"folder": {"mcpServers": [entry]}}}, tmp_path)

    assert layered.settings.mcp_servers == ()
    assert [(value.key, value.outcome) for value in layered.folder_values] == [
        ("mcpServers", "ignored")
    ]


def test_a_plain_http_url_to_another_machine_needs_the_persons_yes() -> None:
    entry = {"name": "docs", "url": "http://example.org/mcp"}

    with pytest.raises(SettingsError) as refused:
        Settings.from_mapping({"mcpServers": [entry]})
    allowed = Settings.from_mapping({"mcpServers": [{**entry, "allowInsecureHttp": True}]})

    assert "[0] url 'http://example.org/mcp' would carry the session" in str(refused.value)
    assert allowed.mcp_servers[0].allow_insecure_http is True


def test_a_plain_http_url_to_this_machine_is_taken_as_the_endpoint_is() -> None:
    settings = Settings.from_mapping(
        {"mcpServers": [{"name": "docs", "url": "http://127.0.0.1:8000/mcp"}]}
    )

    assert settings.mcp_servers[0].url == "http://127.0.0.1:8000/mcp"
