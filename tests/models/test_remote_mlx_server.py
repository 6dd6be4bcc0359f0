"""The remote client against a real `mlx_lm.server` on 127.0.0.1 serving the offline tiny model.

mlx_lm.server streams server-sent events and reports cached prompt tokens, and it accepts but
ignores `response_format`, so it is also the server that does not enforce the schema.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from tests.support.chat_servers import token_texts
from tests.support.workspaces import make_workspace

from counterfoil.cli.main import main
from counterfoil.cli.terminal import EXIT_STOPPED
from counterfoil.loop import run_agent
from counterfoil.models import EndpointOptions, GenerationOptions, ModelProgress, load_generate
from counterfoil.models.errors import GenerationCancelled
from counterfoil.models.server.remote import NOT_ENFORCED, RemoteGenerate
from counterfoil.testing.local_mlx_server import serving_mlx_model

MESSAGES = [
    {"role": "system", "content": "You are a coding agent. Reply with one JSON action."},
    {"role": "user", "content": "Change the greeting to Welcome."},
]


@pytest.fixture(scope="module")
def mlx_server(
    tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """(base URL, model name) of a server the tests started and stop."""
    log = tmp_path_factory.mktemp("mlx-server") / "server.log"
    with serving_mlx_model(tiny_model_dir, log) as url:
        yield url, str(tiny_model_dir)


def test_streamed_tokens_are_the_response(mlx_server: tuple[str, str]) -> None:
    url, model = mlx_server
    tokens: list[str] = []
    progress: list[ModelProgress] = []

    def on_progress(report: ModelProgress) -> None:
        progress.append(report)
        token_texts(tokens.append)(report)

    generate = load_generate(
        model,
        GenerationOptions(max_tokens=24, endpoint=EndpointOptions(url)),
        on_progress=on_progress,
    )

    response = generate(MESSAGES)

    # The server streams detokenized text, so a chunk may hold less or more than one token.
    assert 0 < len(tokens) <= 24 and generate.stats[-1].generated_tokens == 24
    assert response == "".join(tokens).strip()
    assert any(p.state == "generating" and p.tokens_per_second for p in progress)
    assert progress[-1].state == "ready" and progress[-1].tokens == 24


def test_appended_turn_reports_cached_prompt_tokens(mlx_server: tuple[str, str]) -> None:
    url, model = mlx_server
    generate = RemoteGenerate(url, model, max_tokens=8)
    first = generate(MESSAGES)
    generate(
        [
            *MESSAGES,
            {"role": "assistant", "content": first},
            {"role": "user", "content": "Tool result:\nerror: not a valid action"},
        ]
    )

    first_stats, second_stats = generate.stats
    assert first_stats.prompt_tokens and second_stats.prompt_tokens
    assert second_stats.cached_tokens is not None
    assert second_stats.cached_tokens >= first_stats.prompt_tokens - 1


def test_stop_mid_stream_ends_the_call(mlx_server: tuple[str, str]) -> None:
    # Well before its 4000 tokens; Stop's 0.5 s target is measured by bench/stop_latency.py.
    url, model = mlx_server
    stop = threading.Event()
    tokens: list[str] = []

    def on_token(text: str) -> None:
        tokens.append(text)
        if len(tokens) == 5 and not stop.is_set():
            threading.Thread(target=stop.set).start()

    generate = RemoteGenerate(
        url, model, max_tokens=4000, on_progress=token_texts(on_token), should_stop=stop.is_set
    )
    with pytest.raises(GenerationCancelled):
        generate(MESSAGES)

    assert stop.is_set() and len(tokens) < 4000


def test_server_that_ignores_the_schema_is_reported_once(mlx_server: tuple[str, str]) -> None:
    url, model = mlx_server
    progress: list[ModelProgress] = []
    generate = RemoteGenerate(url, model, max_tokens=12, on_progress=progress.append)

    generate(MESSAGES)
    generate(MESSAGES)

    notices = [p for p in progress if NOT_ENFORCED in p.note]
    assert len(notices) == 1 and generate.schema_enforced is False


def test_agent_run_against_the_server_ends_with_invalid_action_observations(
    mlx_server: tuple[str, str], tmp_path: Path
) -> None:
    url, model = mlx_server
    (tmp_path / "app.py").write_text("print('hello')\n", encoding="utf-8")
    workspace = make_workspace(tmp_path, answer=False)
    generate = load_generate(model, GenerationOptions(max_tokens=16, endpoint=EndpointOptions(url)))

    run = run_agent("Change the greeting to Welcome.", generate, workspace)

    assert run.reason == "invalid_action_limit", run.error
    assert all(event.result and event.result.startswith("error: ") for event in run.events)
    assert len(generate.stats) == len(run.events) == 3
    assert all(stats.cached_tokens for stats in generate.stats[1:])


def test_cli_run_with_an_endpoint_reaches_its_end(
    mlx_server: tuple[str, str], tmp_path: Path
) -> None:
    url, model = mlx_server
    (tmp_path / "app.py").write_text("print('hello')\n", encoding="utf-8")
    output = StringIO()

    status = main(
        [
            "agent",
            "Change the greeting.",
            "--root",
            str(tmp_path),
            "--endpoint",
            url,
            "--model",
            model,
            "--max-tokens",
            "16",
        ],
        stdin=StringIO(""),
        stdout=output,
    )

    text = output.getvalue()
    assert status == EXIT_STOPPED, text
    assert f"model: {model} at {url}" in text
    assert "== run ended: invalid_action_limit ==" in text
    assert "prompt tokens cached" in text and NOT_ENFORCED in text
