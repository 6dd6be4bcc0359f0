"""`--engine llama.cpp` without llama.cpp: the setting, the refusals before a process starts,
and llama.cpp's prefill progress read from its stream."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfoil.models import GenerationOptions, ModelLoadError, load_generate
from counterfoil.models.llamacpp import llamacpp_server
from counterfoil.models.llamacpp.llamacpp_server import load_failure
from counterfoil.models.options import LlamaCppOptions
from counterfoil.models.runtime import needed_extra
from counterfoil.models.server.server_stream import chunk_events
from counterfoil.settings.table import Settings, SettingsError


def test_the_engine_setting_runs_a_local_model_on_llama_cpp_with_the_context_window() -> None:
    settings = Settings.from_mapping({"engine": "llama.cpp", "contextTokens": 4096})
    options = GenerationOptions.from_settings(settings)
    assert options.llama_cpp == LlamaCppOptions(context_tokens=4096)
    assert GenerationOptions.from_settings(Settings()).llama_cpp is None


def test_an_unknown_engine_is_refused_with_the_choices() -> None:
    with pytest.raises(SettingsError, match="engine must be one of auto, mlx, llama.cpp"):
        Settings.from_mapping({"engine": "vllm"})


def test_the_llama_cpp_engine_needs_its_own_extra() -> None:
    assert needed_extra("model.gguf", engine="llama.cpp") == "llamacpp"
    assert needed_extra("model.gguf") == "mlx"
    assert needed_extra("scripted:x.jsonl", engine="llama.cpp") is None


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("model.bin", b"GGUF", "runs a .gguf file"),
        ("model.gguf", b"PK\x03\x04", "is not a GGUF file"),
        ("missing.gguf", None, "is not a file"),
    ],
)
def test_what_is_not_a_gguf_file_is_refused_before_a_server_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, content: bytes | None, reason: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    started: list[object] = []
    monkeypatch.setattr(llamacpp_server.subprocess, "Popen", lambda *a, **k: started.append(a))
    with pytest.raises(ModelLoadError, match=reason):
        load_generate(str(path), GenerationOptions(llama_cpp=LlamaCppOptions()))
    assert started == []


def test_llama_cpp_s_first_error_line_is_the_reason() -> None:
    log = (
        "0.00.003 I srv    load_model: loading model '/m.gguf'\n"
        "0.00.003 E gguf_init_from_reader: failed to read key-value pairs\n"
        "0.00.005 E llama_model_load: error loading model: llama_model_loader: failed\n"
    )
    assert load_failure(log) == "failed to read key-value pairs (gguf_init_from_reader)"
    assert load_failure("no errors here\n") == "see llama.cpp's log"


def test_prompt_progress_chunks_are_prefill_events_net_of_the_cache() -> None:
    chunk = {
        "choices": [{"delta": {"content": None}, "index": 0}],
        "prompt_progress": {"total": 334, "cache": 100, "processed": 300, "time_ms": 500},
    }
    assert list(chunk_events(chunk)) == [("prefill", (300, 334, 100, 0.5))]
