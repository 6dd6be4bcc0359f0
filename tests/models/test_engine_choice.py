"""`engine: auto`: a `.gguf` model runs on llama.cpp where MLX has no GPU and llama.cpp is
installed, the run's header says which engine and why, and a named engine is kept."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from counterfoil.cli.model_download import ModelToLoad, model_to_load
from counterfoil.models import GenerationOptions, engine_choice
from counterfoil.models.engine_choice import choose_engine
from counterfoil.models.runtime import needed_extra
from counterfoil.settings.table import Settings
from counterfoil.testing.tiny_gguf import build_tiny_gguf


@pytest.fixture(scope="module")
def gguf_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("engine")
    return build_tiny_gguf(
        directory / "twin.gguf", quantization="Q8_0", vocab_size=600, corpus_bytes=50_000
    )


@pytest.fixture
def cpu_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """MLX without a GPU, llama.cpp installed."""
    monkeypatch.setattr(engine_choice, "mlx_has_gpu", lambda: False)
    monkeypatch.setattr(engine_choice, "llamacpp_installed", lambda: True)


def _load(settings: Settings) -> tuple[str, ModelToLoad]:
    stdout = io.StringIO()
    args = argparse.Namespace(enable_thinking=False, device=None, model=settings.model)
    model = model_to_load(args, settings, stdout)
    assert isinstance(model, ModelToLoad), stdout.getvalue()
    return stdout.getvalue(), model


def test_the_engine_is_auto_by_default() -> None:
    assert Settings().engine == "auto"


@pytest.mark.usefixtures("cpu_machine")
def test_a_gguf_file_runs_on_llama_cpp_where_mlx_has_no_gpu(gguf_file: Path) -> None:
    header, model = _load(Settings(model=str(gguf_file)))

    assert model.options.llama_cpp is not None
    assert (
        "engine: llama.cpp (a .gguf file, MLX has no GPU here, llama.cpp is installed)\n" in header
    )


@pytest.mark.usefixtures("cpu_machine")
def test_engine_mlx_still_chooses_mlx_for_a_gguf_file(gguf_file: Path) -> None:
    header, model = _load(Settings(model=str(gguf_file), engine="mlx"))

    assert model.options.llama_cpp is None
    assert "engine: mlx (chosen by the engine setting)\n" in header


def test_a_gguf_file_stays_on_mlx_where_mlx_has_a_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine_choice, "mlx_has_gpu", lambda: True)
    monkeypatch.setattr(engine_choice, "llamacpp_installed", lambda: True)

    choice = choose_engine("model.gguf", "auto")

    assert choice is not None and choice.engine == "mlx"
    assert "MLX has a GPU here" in choice.reason


def test_without_llama_cpp_a_gguf_file_runs_on_mlx_and_the_reason_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine_choice, "mlx_has_gpu", lambda: False)
    monkeypatch.setattr(engine_choice, "llamacpp_installed", lambda: False)

    choice = choose_engine("model.gguf", "auto")

    assert choice is not None and choice.engine == "mlx"
    assert "pip install 'counterfoil[llamacpp]'" in choice.reason


@pytest.mark.usefixtures("cpu_machine")
def test_a_hub_model_name_runs_on_mlx() -> None:
    options = GenerationOptions.from_settings(Settings(model="qwen3-4b"))

    assert options.llama_cpp is None
    assert needed_extra("qwen3-4b", engine="auto") == "mlx"


@pytest.mark.usefixtures("cpu_machine")
def test_the_chosen_engine_decides_the_extra_a_gguf_file_needs() -> None:
    assert needed_extra("model.gguf", engine="auto") == "llamacpp"
    assert needed_extra("model.gguf", engine="mlx") == "mlx"


@pytest.mark.usefixtures("cpu_machine")
def test_a_script_and_a_model_server_have_no_engine_to_choose() -> None:
    assert choose_engine("scripted:run.jsonl", "auto") is None
    assert choose_engine("model.gguf", "auto", endpoint="http://127.0.0.1:8080/v1") is None
