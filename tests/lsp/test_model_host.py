"""The daemon's model host: lazy loading, the cache across runs, and what it reports."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from counterfoil.lsp import model_host
from counterfoil.lsp.model_host import ModelHost, ModelLoadFailed
from counterfoil.lsp.settings import Settings
from counterfoil.models import ModelProgress

from .conftest import RecordingChannel

TOOLS = frozenset({"list_files", "read_file"})


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Replace the real loader with one that streams three tokens per call."""
    calls: list[tuple[str, dict[str, Any]]] = []

    def fake_load(spec: str, **options: Any) -> Any:
        calls.append((spec, options))
        options["on_progress"](ModelProgress("loading", message="reading weights"))
        if spec == "broken":
            raise RuntimeError("no such model")

        def generate(messages: list[dict[str, str]]) -> str:
            for text in ("{", '"final"', ':"x"}'):
                time.sleep(0.06)
                options["on_token"](text)
            options["on_progress"](ModelProgress("generating", tokens=3, tokens_per_second=50.0))
            return '{"final":"x"}'

        return generate

    monkeypatch.setattr(model_host, "load_generate", fake_load)
    return calls


def test_a_loaded_model_is_kept_while_its_spec_and_options_stay(
    loads: list[tuple[str, dict[str, Any]]], tmp_path: Path
) -> None:
    host = ModelHost(RecordingChannel())
    settings = Settings(model="qwen3-0.6b", max_tokens=64)

    first = host.load(settings, tmp_path, TOOLS)
    again = host.load(settings, tmp_path, TOOLS)
    other = host.load(Settings(model="qwen3-0.6b", max_tokens=128), tmp_path, TOOLS)

    assert first is again
    assert other is not first
    assert [options["max_tokens"] for _, options in loads] == [64, 128]
    assert loads[0][1]["available_tools"] == TOOLS
    assert loads[0][1]["constrain"] is True


def test_a_scripted_model_is_made_afresh_for_each_run_relative_to_the_root(
    loads: list[tuple[str, dict[str, Any]]], tmp_path: Path
) -> None:
    host = ModelHost(RecordingChannel())
    settings = Settings(model="scripted:replies.jsonl")

    host.load(settings, tmp_path, TOOLS)
    host.load(settings, tmp_path, TOOLS)

    assert [spec for spec, _ in loads] == [f"scripted:{tmp_path / 'replies.jsonl'}"] * 2


def test_loading_and_generation_are_reported_with_tokens_per_second(
    loads: list[tuple[str, dict[str, Any]]], tmp_path: Path
) -> None:
    channel = RecordingChannel()
    host = ModelHost(channel)
    reports: list[str] = []

    generate = host.wrap(host.load(Settings(model="qwen3-0.6b"), tmp_path, TOOLS), reports.append)
    assert generate([]) == '{"final":"x"}'

    assert channel.progress[0] == ("begin", "Loading model", "qwen3-0.6b")
    assert ("report", "Loading model", "reading weights") in channel.progress
    assert channel.progress[-1] == ("end", "Loading model", "ready")
    assert channel.states()[:2] == ["loading", "ready"]
    assert channel.states()[-1] == "ready"
    assert "generating" in channel.states()
    assert reports[0] == "generating"
    assert any(r.startswith(("2 tokens", "3 tokens")) and "tokens/s" in r for r in reports[1:-1])
    assert reports[-1].startswith("3 tokens, ") and reports[-1].endswith(" tokens/s")
    assert host.state == "ready"


def test_a_model_that_fails_to_load_is_an_error_state_not_an_exception_elsewhere(
    loads: list[tuple[str, dict[str, Any]]], tmp_path: Path
) -> None:
    channel = RecordingChannel()
    host = ModelHost(channel)

    with pytest.raises(ModelLoadFailed, match="could not load model broken: no such model"):
        host.load(Settings(model="broken"), tmp_path, TOOLS)

    assert host.state == "error"
    assert channel.progress[-1] == ("end", "Loading model", "failed")
