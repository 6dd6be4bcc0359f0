from __future__ import annotations

from pathlib import Path

import pytest

from counterfoil.models import ModelLoadError
from counterfoil.models.hub.model_names import SHORT_NAMES, resolve_model


@pytest.mark.parametrize(
    ("short", "repo"),
    [
        ("qwen3-0.6b", "Qwen/Qwen3-0.6B-MLX-4bit"),
        ("qwen3-1.7b", "Qwen/Qwen3-1.7B-MLX-4bit"),
        ("qwen3-4b", "Qwen/Qwen3-4B-MLX-4bit"),
        ("qwen3-8b", "Qwen/Qwen3-8B-MLX-4bit"),
        ("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B-MLX-4bit"),
    ],
)
def test_short_names_map_to_mlx_repos(short: str, repo: str) -> None:
    source = resolve_model(short)
    assert source.location == repo
    assert not source.is_local


def test_short_names_cover_exactly_the_documented_models() -> None:
    assert set(SHORT_NAMES) == {"qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-30b-a3b"}


def test_existing_directory_is_a_local_model(tmp_path: Path) -> None:
    source = resolve_model(str(tmp_path))
    assert source.is_local
    assert source.location == str(tmp_path.resolve())


def test_repo_id_passes_through() -> None:
    source = resolve_model("mlx-community/Qwen3-4B-4bit")
    assert source.location == "mlx-community/Qwen3-4B-4bit"
    assert not source.is_local


def test_missing_local_directory_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="does not exist"):
        resolve_model(str(tmp_path / "no-such-model"))


def test_unknown_name_lists_the_short_names() -> None:
    with pytest.raises(ModelLoadError, match="qwen3-4b") as raised:
        resolve_model("gpt-five")
    assert "\n" not in str(raised.value)


def test_file_is_not_a_model_directory(tmp_path: Path) -> None:
    file = tmp_path / "weights.bin"
    file.write_bytes(b"")
    with pytest.raises(ModelLoadError, match="not a directory"):
        resolve_model(str(file))
