from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from counterfoil.models import GenerationOptions, ModelLoadError, ModelProgress, load_generate
from counterfoil.models.mlx.mlx import MLXGenerate, load_model

REPOSITORY = Path(__file__).resolve().parents[2]


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
        env=environment,
        cwd=REPOSITORY,
    )


def test_counterfoil_imports_without_mlx() -> None:
    result = _run_python(
        "import sys\n"
        "for name in ('mlx', 'mlx.core', 'mlx_lm', 'llguidance'):\n"
        "    sys.modules[name] = None\n"
        "import counterfoil, counterfoil.models\n"
        "from counterfoil.models import load_generate\n"
        "assert not any(name.startswith(('mlx', 'llguidance')) and sys.modules[name]\n"
        "               for name in list(sys.modules))\n"
        "print('ok')\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_missing_mlx_is_a_one_line_load_error(tiny_model_spec: str) -> None:
    result = _run_python(
        "import sys\n"
        "sys.modules['mlx'] = None\n"
        "sys.modules['mlx.core'] = None\n"
        "sys.modules['mlx_lm'] = None\n"
        "from counterfoil.models import ModelLoadError, load_generate\n"
        "try:\n"
        f"    load_generate({tiny_model_spec!r})\n"
        "except ModelLoadError as error:\n"
        "    print(error)\n"
    )
    assert result.returncode == 0, result.stderr
    message = result.stdout.strip()
    assert "MLX is not installed" in message
    assert "pip install" in message
    assert "\n" not in message


def test_model_not_available_offline_is_a_one_line_load_error(mlx_installed: None) -> None:
    with pytest.raises(ModelLoadError) as raised:
        load_generate("counterfoil-test/no-such-model-anywhere")
    message = str(raised.value)
    assert "could not load model" in message
    assert "\n" not in message
    assert "hf download counterfoil-test/no-such-model-anywhere" in message
    assert "local MLX model directory" in message and "scripted:PATH" in message
    assert message.endswith(".")


def test_directory_without_weights_is_a_load_error(mlx_installed: None, tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="could not load model"):
        load_generate(str(tmp_path))


def test_load_generate_returns_the_mlx_generate_for_a_directory(tiny_model_spec: str) -> None:
    generate = load_generate(tiny_model_spec, GenerationOptions(max_tokens=8))
    assert isinstance(generate, MLXGenerate)


def test_loaded_weights_are_shared_between_generate_callables(tiny_model_spec: str) -> None:
    first = load_generate(
        tiny_model_spec, GenerationOptions(available_tools=frozenset({"read_file"}))
    )
    second = load_generate(tiny_model_spec, GenerationOptions(constrain=False))
    assert isinstance(first, MLXGenerate) and isinstance(second, MLXGenerate)
    assert first.loaded is second.loaded


def test_switching_models_keeps_only_the_latest_loaded(
    mlx_installed: None, tiny_model_spec: str, tmp_path: Path
) -> None:
    import gc
    import weakref

    from counterfoil.testing.tiny_model import build_tiny_model

    other = build_tiny_model(tmp_path / "other", corpus_bytes=200_000, vocab_size=600)
    first = load_model(str(other))
    released = weakref.ref(first.model)
    del first
    load_model(tiny_model_spec)
    gc.collect()
    assert released() is None, "the previous model's weights are still held"
    assert load_model(tiny_model_spec) is load_model(tiny_model_spec)


def test_progress_reports_loading_ready_generating_ready(
    mlx_installed: None, tmp_path: Path
) -> None:
    from counterfoil.testing.tiny_model import build_tiny_model

    directory = build_tiny_model(tmp_path / "fresh", corpus_bytes=200_000, vocab_size=600)
    reports: list[ModelProgress] = []
    generate = load_generate(
        str(directory), GenerationOptions(max_tokens=24), on_progress=reports.append
    )
    assert [report.state for report in reports] == ["loading", "ready"]
    reports.clear()
    generate([{"role": "user", "content": "hello"}])
    states = [report.state for report in reports]
    assert states[0] == "generating" and states[-1] == "ready"
    counted = [report for report in reports if report.state == "generating" and report.tokens]
    assert counted, "generation reported no token counts"
    assert all(report.tokens_per_second and report.tokens_per_second > 0 for report in counted)
    assert reports[-1].tokens == generate.stats[-1].generated_tokens


def test_unknown_device_is_a_load_error(tiny_model_spec: str) -> None:
    with pytest.raises(ModelLoadError, match="unknown device"):
        load_model(tiny_model_spec, device="tpu")


def test_gpu_request_without_gpu_backend_is_a_load_error(tiny_model_spec: str) -> None:
    import mlx.core as mx

    if mx.is_available(mx.gpu):
        pytest.skip("this MLX build has a GPU backend")
    with pytest.raises(ModelLoadError, match="--device cpu"):
        load_model(tiny_model_spec, device="gpu")
