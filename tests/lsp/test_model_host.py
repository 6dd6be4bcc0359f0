"""The daemon's model host: lazy loading, the cache across runs, and what it reports."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import run_agent
from counterfoil.lsp.model_service import model_host
from counterfoil.lsp.model_service.model_host import HostedGenerate, ModelHost, ModelLoadFailed
from counterfoil.models import GenerationOptions, ModelProgress, ProgressCallback
from counterfoil.settings.table import Settings

from .conftest import RecordingChannel

Loads = list[tuple[str, GenerationOptions]]


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Loads:
    """Replace the real loader with one that streams three tokens per call."""
    calls: Loads = []

    def fake_load(spec: str, options: GenerationOptions, *, on_progress: ProgressCallback) -> Any:
        calls.append((spec, options))
        on_progress(ModelProgress("loading", message=f"loading {spec}"))  # as MLX's loader does
        on_progress(ModelProgress("loading", message="reading weights"))
        if spec == "broken":
            raise RuntimeError("no such model")

        def generate(messages: list[dict[str, str]]) -> str:
            for count, text in enumerate(("{", '"final"', ':"x"}'), start=1):
                time.sleep(0.06)
                on_progress(
                    ModelProgress("generating", tokens=count, tokens_per_second=50.0, text=text)
                )
            # The counters of a longer response: 40 tokens at 50 a second, a span of 0.8 s.
            on_progress(ModelProgress("ready", tokens=40, tokens_per_second=50.0))
            return '{"final":"x"}'

        return generate

    monkeypatch.setattr(model_host, "load_generate", fake_load)
    return calls


def test_a_loaded_model_is_kept_while_its_spec_and_options_stay(
    loads: Loads, tmp_path: Path
) -> None:
    host = ModelHost(RecordingChannel())
    settings = Settings(model="qwen3-0.6b", max_tokens=64)

    first = host.load(settings, tmp_path)
    again = host.load(settings, tmp_path)
    other = host.load(Settings(model="qwen3-0.6b", max_tokens=128), tmp_path)

    assert first is again
    assert other is not first
    assert [options.max_tokens for _, options in loads] == [64, 128]
    assert loads[0][1].constrain is True


def test_a_scripted_model_is_made_afresh_for_each_run_relative_to_the_root(
    loads: Loads, tmp_path: Path
) -> None:
    host = ModelHost(RecordingChannel())
    settings = Settings(model="scripted:replies.jsonl")

    host.load(settings, tmp_path)
    host.load(settings, tmp_path)

    assert [spec for spec, _ in loads] == [f"scripted:{tmp_path / 'replies.jsonl'}"] * 2


def test_loading_and_generation_are_reported_with_tokens_per_second(
    loads: Loads, tmp_path: Path
) -> None:
    channel = RecordingChannel()
    host = ModelHost(channel)
    reports: list[str] = []

    def report(step: int, phase: str, message: str) -> None:
        reports.append(f"step {step}: {message}")

    generate = HostedGenerate(host, host.load(Settings(model="qwen3-0.6b"), tmp_path), report)
    assert generate([]) == '{"final":"x"}'

    assert channel.progress[0] == ("begin", "Loading model", "qwen3-0.6b")
    assert ("report", "Loading model", "reading weights") in channel.progress
    assert channel.progress[-1] == ("end", "Loading model", "ready")
    assert channel.states()[:2] == ["loading", "ready"]
    assert channel.states()[-1] == "ready"
    assert "generating" in channel.states()
    assert reports[0] == "step 1: reading the prompt…"
    assert any(r.startswith(("step 1: 2 tokens", "step 1: 3 tokens")) for r in reports[1:-1])
    assert reports[-1] == "step 1: 40 tokens, 50.0 tokens/s"
    assert host.state == "ready"


def test_a_model_that_fails_to_load_is_an_error_state_not_an_exception_elsewhere(
    loads: Loads, tmp_path: Path
) -> None:
    channel = RecordingChannel()
    host = ModelHost(channel)

    with pytest.raises(ModelLoadFailed, match="could not load model broken: no such model"):
        host.load(Settings(model="broken"), tmp_path)

    assert host.state == "error"
    assert channel.progress[-1] == ("end", "Loading model", "failed")


def test_a_runs_generate_passes_the_enabled_tools_on_to_the_model(tmp_path: Path) -> None:
    told: list[tuple[frozenset[str], object]] = []

    class ToolAware:
        def configure_tools(
            self,
            available_tools: frozenset[str],
            commands: object,
            mcp_tools: object = None,
            view: object = None,
        ) -> None:
            told.append((available_tools, commands))

        def __call__(self, messages: list[dict[str, str]]) -> str:
            return '{"final":"x"}'

    host = ModelHost(RecordingChannel())
    steps: list[tuple[int, str]] = []
    generate = HostedGenerate(
        host, ToolAware(), lambda step, phase, message: steps.append((step, message))
    )
    workspace = make_workspace(tmp_path, allow_writes=True)

    run = run_agent("anything", generate, workspace)

    assert run.completed
    assert told == [(frozenset({"list_files", "read_file", "write_file", "edit_file"}), ())]
    assert steps == [(1, "reading the prompt…"), (1, "response ready")]


def test_the_run_is_told_what_loading_does_and_when_it_is_done(
    loads: Loads, tmp_path: Path
) -> None:
    host = ModelHost(RecordingChannel())
    told: list[tuple[str, str]] = []

    host.load(Settings(model="qwen3-0.6b"), tmp_path, lambda *said: told.append(said))
    host.load(Settings(model="qwen3-0.6b"), tmp_path, lambda *said: told.append(said))

    assert told[:2] == [("loading", "loading qwen3-0.6b"), ("loading", "reading weights")]
    assert len(told) == 4  # each line once, the cached load's included
    assert told[2][0] == "loaded"
    assert re.fullmatch(r"qwen3-0\.6b loaded in \d+\.\d\d s", told[2][1])
    assert told[3:] == [("loaded", "qwen3-0.6b (loaded for an earlier run)")]


def test_a_one_token_step_reports_no_rate(tmp_path: Path) -> None:
    def one_token(messages: list[dict[str, str]]) -> str:
        host._on_progress(ModelProgress("generating", tokens=1, tokens_per_second=30396.1))
        host._on_progress(ModelProgress("ready", tokens=1, tokens_per_second=30396.1))
        return '{"final":"x"}'

    channel = RecordingChannel()
    host = ModelHost(channel)
    reports: list[tuple[str, str]] = []
    generate = HostedGenerate(host, one_token, lambda step, *said: reports.append(said))

    generate([])

    assert reports[-1] == ("generated", "1 token")
    assert "tok" not in "".join(message for _, message in reports if message != "1 token")
    states = [p for m, p in channel.notifications if m == "counterfoil/modelState"]
    assert states and all(state["tokensPerSecond"] is None for state in states)


def test_a_steps_end_says_its_prefill_and_what_it_generated(tmp_path: Path) -> None:
    def prefilled(messages: list[dict[str, str]]) -> str:
        for done, seconds in ((400, 0.5), (1200, 1.5)):
            host._on_progress(
                ModelProgress(
                    "generating",
                    message=f"prefill {done}/1200",
                    prompt_tokens=done,
                    prefill_total=1200,
                    tokens_per_second=done / seconds,
                )
            )
        host._on_progress(ModelProgress("ready", tokens=2, tokens_per_second=900.0))
        return '{"final":"x"}'

    host = ModelHost(RecordingChannel())
    reports: list[tuple[int, str, str]] = []
    generate = HostedGenerate(host, prefilled, lambda *said: reports.append(said))

    generate([])

    assert reports[-1] == (1, "generated", "prefill 1,200 tokens, 800 tokens/s; generated 2 tokens")


def test_a_step_reads_as_reading_the_prompt_until_its_first_token(tmp_path: Path) -> None:
    seen: list[tuple[tuple[int, str, str], ...]] = []

    def silent_prefill(messages: list[dict[str, str]]) -> str:
        seen.append(tuple(reports))  # what the person was told while no token had come
        host._on_progress(ModelProgress("generating", tokens=3, tokens_per_second=20.0))
        return '{"final":"x"}'

    channel = RecordingChannel()
    host = ModelHost(channel)
    reports: list[tuple[int, str, str]] = []
    generate = HostedGenerate(host, silent_prefill, lambda *said: reports.append(said))

    generate([])

    assert seen == [((1, "prefill", "reading the prompt…"),)]
    states = [p for m, p in channel.notifications if m == "counterfoil/modelState"]
    assert (states[0]["state"], states[0]["message"], states[0]["tokens"]) == (
        "generating",
        "reading the prompt…",
        0,
    )


class ClosableModel:
    """A model holding something outside the process (as llama.cpp's server is)."""

    def __init__(self) -> None:
        self.closed = False

    def __call__(self, messages: list[dict[str, str]]) -> str:
        return '{"final":"x"}'

    def close(self) -> None:
        self.closed = True


def test_a_model_is_closed_when_another_replaces_it_and_when_the_daemon_closes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    made: list[tuple[GenerationOptions, ClosableModel]] = []

    def fake_load(spec: str, options: GenerationOptions, **callbacks: Any) -> ClosableModel:
        made.append((options, ClosableModel()))
        return made[-1][1]

    monkeypatch.setattr(model_host, "load_generate", fake_load)
    host = ModelHost(RecordingChannel())
    host.load(Settings(model="m.gguf", engine="llama.cpp"), tmp_path)
    host.load(Settings(model="m.gguf", engine="llama.cpp", context_tokens=4096), tmp_path)
    assert [model.closed for _, model in made] == [True, False]
    host.close()
    assert [model.closed for _, model in made] == [True, True]


def test_a_llama_cpp_model_is_loaded_with_the_stop_check(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[dict[str, Any]] = []

    def fake_load(spec: str, options: GenerationOptions, **callbacks: Any) -> ClosableModel:
        seen.append(callbacks)
        return ClosableModel()

    monkeypatch.setattr(model_host, "load_generate", fake_load)
    ModelHost(RecordingChannel()).load(Settings(model="m.gguf", engine="llama.cpp"), tmp_path)
    assert callable(seen[0].get("should_stop"))
