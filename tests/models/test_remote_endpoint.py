"""Which endpoints prompts may go to, where the key comes from, and how the schema is asked for."""

from __future__ import annotations

from typing import Any

import pytest

from counterfoil.models import EndpointOptions, GenerationOptions, ModelLoadError, load_generate
from counterfoil.models.server.endpoint import api_key_from_environment, checked_endpoint
from counterfoil.models.server.remote import schema_request, server_action_schema
from counterfoil.tools import action_schema
from counterfoil.workspace_view import FileRead, WorkspaceView


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1/",
        "http://[::1]:8000/v1",
        "http://127.8.9.10/v1",
        "https://models.example.com/v1",
    ],
)
def test_loopback_http_and_any_https_are_accepted(url: str) -> None:
    assert checked_endpoint(url) == url.rstrip("/")


@pytest.mark.parametrize(
    "url",
    ["http://10.0.0.5:8000/v1", "http://gpu-box.local:8000/v1", "http://localhost.example.com/v1"],
)
def test_plain_http_to_another_machine_needs_the_opt_in(url: str) -> None:
    with pytest.raises(ModelLoadError, match="--allow-insecure-http"):
        checked_endpoint(url)
    assert checked_endpoint(url, allow_insecure_http=True) == url


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/v1",
        "127.0.0.1:8080",
        "",
        "https://user:secret@host/v1",
        "https://host/v1?key=1",
    ],
)
def test_malformed_or_credential_bearing_endpoints_are_refused(url: str) -> None:
    with pytest.raises(ModelLoadError):
        checked_endpoint(url)


def test_refused_endpoint_is_refused_before_any_request() -> None:
    with pytest.raises(ModelLoadError, match="unencrypted"):
        load_generate("m", GenerationOptions(endpoint=EndpointOptions("http://192.0.2.1:8000/v1")))


def test_key_comes_from_the_named_variable_else_openai_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert api_key_from_environment(None) is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
    monkeypatch.setenv("TEAM_KEY", "sk-team")
    assert api_key_from_environment(None) == "sk-default"
    assert api_key_from_environment("TEAM_KEY") == "sk-team"


def test_a_named_but_unset_key_variable_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISSING_KEY", raising=False)
    with pytest.raises(ModelLoadError, match="MISSING_KEY"):
        api_key_from_environment("MISSING_KEY")


def test_server_schema_is_the_local_decoders_for_enabled_tools_and_allowed_argv() -> None:
    allowed = (("python", "validate.py"),)
    schema = server_action_schema({"read_file", "run_command"}, allowed)

    assert schema == action_schema({"read_file", "run_command"}, allowed)
    tools = [choice["properties"].get("tool", {}).get("const") for choice in schema["anyOf"]]
    assert tools == ["read_file", "run_command", None]
    assert schema["anyOf"][1]["properties"]["argv"] == {
        "anyOf": [{"const": ["python", "validate.py"]}]
    }


def test_a_server_is_not_asked_to_hold_a_hunk_to_a_pattern_over_its_text() -> None:
    # llama.cpp's server reads a string's pattern over the JSON text as written: a newline in
    # the pattern became a raw newline in the string. The gate refuses a hunk that misses.
    tools = {"read_file", "patch_file"}
    view = WorkspaceView(files=("a.py",), reads=(FileRead("a.py", "A = 1\n"),), existing=("a.py",))

    local = action_schema(tools, (), view=view)
    served = server_action_schema(tools, (), view=view)

    def diff(schema: dict[str, Any]) -> dict[str, Any]:
        patch = next(
            c for c in schema["anyOf"] if c["properties"]["tool"] == {"const": "patch_file"}
        )
        return dict(patch["properties"]["diff"])

    assert "pattern" in diff(local)
    assert diff(served) == {"type": "string"}


def test_each_schema_mode_asks_in_its_servers_form() -> None:
    schema = {"type": "object"}
    strict = schema_request("json_schema", schema)["response_format"]
    assert strict["json_schema"] == {"name": "counterfoil_action", "schema": schema, "strict": True}
    assert schema_request("json_object", schema) == {
        "response_format": {"type": "json_object", "schema": schema}
    }
    assert schema_request("structured_outputs", schema) == {"structured_outputs": {"json": schema}}
    assert schema_request("none", schema) == {}


def test_a_model_servers_identity_names_the_endpoint_and_the_served_model() -> None:
    pytest.importorskip("httpx")
    from counterfoil.models.identity import identity_of
    from counterfoil.models.server.remote import RemoteGenerate

    generate = RemoteGenerate("http://127.0.0.1:8080/v1", "tiny", max_tokens=77)
    try:
        identity = identity_of(generate, "tiny")
    finally:
        generate.close()

    assert identity.resolved == {"endpoint": "http://127.0.0.1:8080/v1", "served_model": "tiny"}
    assert identity.sampling == {"temperature": 0.0, "max_tokens": 77}
