"""The CPU's fast path: quantized weights dequantized to float32 at load, said in the header."""

from __future__ import annotations

from pathlib import Path

import pytest

mx = pytest.importorskip("mlx.core")
pytest.importorskip("gguf", reason="the gguf package writes the test file")

from counterfoil.models.mlx.cpu_path import OPENBLAS, _quantized_modules, dequantize_to
from counterfoil.models.mlx.mlx import load_model
from counterfoil.testing.tiny_gguf import build_tiny_gguf


@pytest.fixture(scope="module")
def quantized_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("cpu-path")
    return build_tiny_gguf(directory / "tiny-q8.gguf", quantization="Q8_0", seed=5)


def logits(loaded: object, tokens: list[int]) -> object:
    model = loaded.model  # type: ignore[attr-defined]
    return model(mx.array([tokens]))[0].astype(mx.float32)


def test_cpu_load_dequantizes_quantized_weights_to_float32(
    quantized_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    slow = load_model(str(quantized_file), device="cpu", fast_cpu=False)
    assert slow.compute is not None and slow.compute.weights == "quantized"
    expected = logits(slow, [5, 17, 300, 42])
    fast = load_model(str(quantized_file), device="cpu")
    assert fast.compute is not None
    if fast.compute.blas != "OpenBLAS":
        assert fast.compute.weights == "quantized (no OpenBLAS loaded)"
        return
    assert fast.compute.weights == "dequantized to float32"
    assert fast.compute.device == "cpu"
    assert not _quantized_modules(fast.model)
    assert fast.model.model.layers[0].mlp.up_proj.weight.dtype == mx.float32
    assert mx.allclose(logits(fast, [5, 17, 300, 42]), expected, atol=0.05).item()


def test_doctor_names_the_cpu_path() -> None:
    from counterfoil.models.mlx.checks import cpu_path_check

    check = cpu_path_check()
    assert check.name == "compute" and "CPU" in check.detail and "float32" in check.detail
    assert ("OpenBLAS (" in check.detail) == OPENBLAS.is_file()


def test_dequantize_to_float16_gives_float16_weights_with_the_same_logits(
    quantized_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's float16 row is the same model as the float32 one, only in half precision."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    loaded = load_model(str(quantized_file), device="cpu", fast_cpu=False)
    expected = logits(loaded, [5, 17, 300, 42])
    dequantize_to(loaded.model, "float16")
    assert not _quantized_modules(loaded.model)
    assert loaded.model.model.layers[0].mlp.up_proj.weight.dtype == mx.float16
    assert mx.allclose(logits(loaded, [5, 17, 300, 42]), expected, atol=0.1).item()
