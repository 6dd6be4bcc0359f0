"""The action schema enforced by a real server: llama-cpp-python's, on a tiny GGUF written here.

llama-cpp-python (0.3.36) turns `{"type": "json_object", "schema": …}` into a grammar and
refuses OpenAI's `json_schema` form outright (a validation error), which the error message
turns into a hint at `--schema-mode json_object`. Building llama-cpp-python takes minutes of compiling, so it is not part
of the project's install; these tests run where it is installed
(`pip install 'llama-cpp-python[server]'`) and are skipped elsewhere.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil.actions import parse_action
from counterfoil.gate.workspace import Workspace
from counterfoil.models.errors import ModelServerError
from counterfoil.models.server.remote import NOT_ENFORCED, RemoteGenerate
from counterfoil.testing.local_mlx_server import free_port, serving

pytest.importorskip("httpx")
pytest.importorskip(
    "llama_cpp.server", reason="llama-cpp-python[server] is not installed (it builds from source)"
)
pytest.importorskip("gguf", reason="the gguf package writes the test model")

TURNS = 20
TOOL_RESULTS = (
    "file app.py\nfile validate.py\ndir tests",
    'def greet(name):\n    return "Hello, " + name\n',
    "error: path is not accessible",
)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from counterfoil.testing.tiny_gguf import build_tiny_gguf

    directory = tmp_path_factory.mktemp("llama")
    model = build_tiny_gguf(directory / "tiny.gguf", seed=1)
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--model_alias",
        "tiny",
    ]
    with serving(
        argv, f"http://127.0.0.1:{port}/v1", directory / "server.log", "llama_cpp.server"
    ) as url:
        yield url


def read_only_workspace(root: Path) -> Workspace:
    (root / "app.py").write_text("print('hello')\n", encoding="utf-8")
    return make_workspace(root)  # no writes, no commands


def converse(generate: RemoteGenerate, system: str, turns: int) -> list[str]:
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": "Change the greeting to Welcome."},
    ]
    responses = []
    for turn in range(turns):
        response = generate(list(messages))
        responses.append(response)
        messages += [
            {"role": "assistant", "content": response},
            {"role": "user", "content": "Tool result:\n" + TOOL_RESULTS[turn % 3]},
        ]
    return responses


def test_enforcing_server_gives_only_valid_actions_over_twenty_turns(
    llama_server: str, tmp_path: Path
) -> None:
    workspace = read_only_workspace(tmp_path)
    progress: list[str] = []
    generate = RemoteGenerate(
        llama_server,
        "tiny",
        schema_mode="json_object",
        max_tokens=256,
        available_tools=workspace.available_tools,
        on_progress=lambda report: progress.append(report.note),
    )

    responses = converse(generate, "Reply with one JSON action.", TURNS)

    actions = [parse_action(response, workspace.available_tools) for response in responses]
    assert len(actions) == TURNS  # parse_action raised on none of them
    assert generate.schema_enforced is None
    assert not any(NOT_ENFORCED in message for message in progress)
    assert all(stats.finish_reason == "stop" for stats in generate.stats)


def test_the_same_server_refuses_the_json_schema_form_and_says_which_to_use(
    llama_server: str, tmp_path: Path
) -> None:
    workspace = read_only_workspace(tmp_path)
    generate = RemoteGenerate(
        llama_server, "tiny", schema_mode="json_schema", available_tools=workspace.available_tools
    )

    with pytest.raises(ModelServerError) as error:
        converse(generate, "Reply with one JSON action.", 1)

    assert "response_format" in str(error.value) and "--schema-mode" in str(error.value)
    assert "\n" not in str(error.value)
