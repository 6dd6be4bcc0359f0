"""A GGUF file (llama.cpp's format) imported once into an MLX model folder.

The header is read and bounded first (`gguf_header`: a few KB, milliseconds), and a file
Counterfoil cannot import is refused with the reason before the file is hashed or read further.
The conversion itself (`counterfoil.models.mlx.gguf_convert`: the `gguf` package's reference
dequantization, MLX's affine quantization where the format allows it exactly, mlx-lm's names for
the architecture, `config.json` from the metadata, a `tokenizers` tokenizer from the vocabulary,
the chat template) runs in a child process, so a file that still trips a native library ends
that process with one sentence while the caller lives on. The folder is named by the file's
SHA-256 under the user's cache folder, written beside and renamed into place, and holds a
manifest of its files' digests, checked before use.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelLoadError
from ..file_digest import file_sha256
from ..progress import ModelProgress, ProgressCallback
from .gguf_architectures import (
    ALTERNATIVE,
    SUPPORTED,
    Architecture,
    architecture_of,
    mlx_name,
    model_config,
)
from .gguf_header import GGUFHeader, read_gguf_header
from .gguf_quants import can_dequantize
from .tokenizer_from_gguf import check_vocabulary

IMPORT_FORMAT = 2
MANIFEST = "counterfoil-gguf.json"


@dataclass(frozen=True)
class ImportedGGUF:
    """The MLX folder a GGUF file became, and the file's SHA-256 (its cache key)."""

    folder: Path
    sha256: str
    source: Path


def is_gguf_spec(spec: str) -> bool:
    return spec.strip().lower().endswith(".gguf")


def gguf_cache_root() -> Path:
    """`$XDG_CACHE_HOME/counterfoil/gguf` (default ~/.cache/counterfoil/gguf)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "counterfoil" / "gguf"


def import_gguf(
    path: str | Path,
    *,
    cache_root: Path | None = None,
    on_progress: ProgressCallback | None = None,
) -> ImportedGGUF:
    """The MLX folder for the GGUF file at `path`, imported now unless already cached.

    Raises `ModelLoadError` (one sentence) for a missing or damaged file, an architecture,
    tokenizer or quantization the import does not handle, or a conversion that failed.
    """
    source = Path(path).expanduser()
    if not source.is_file():
        raise ModelLoadError(f"GGUF file {source} does not exist")
    check_importable(read_gguf_header(source), source.name)
    report = _reporter(on_progress)
    report(f"hashing {source.name}")
    digest = file_sha256(source)
    root = cache_root or gguf_cache_root()
    folder = root / digest
    if _verified(folder, digest):
        return ImportedGGUF(folder, digest, source.resolve())
    report(f"importing {source.name} into {folder}")
    partial = root / f"{digest}.partial-{os.getpid()}"
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    try:
        _convert_in_child(source, partial, report)
        _write_manifest(partial, digest)
        _publish(partial, folder, digest)
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    report(f"imported {source.name}")
    return ImportedGGUF(folder, digest, source.resolve())


def check_importable(header: GGUFHeader, name: str) -> Architecture:
    """The file's architecture, or `ModelLoadError` for anything the import cannot do, read
    from the header alone."""
    try:
        return _importable(header, name)
    except ModelLoadError:
        raise
    except (ValueError, TypeError, OverflowError, KeyError, IndexError) as error:
        raise ModelLoadError(
            f"{name} has metadata Counterfoil cannot use ({first_line(error)}); {ALTERNATIVE}"
        ) from None


def first_line(error: BaseException) -> str:
    """An error's first line (its type's name when it has no text), for a one-sentence refusal."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _importable(header: GGUFHeader, name: str) -> Architecture:
    from gguf import GGMLQuantizationType

    architecture = architecture_of(header.metadata, name)
    check_vocabulary(header.metadata, name)
    for tensor in header.tensors:
        mlx_name(tensor.name, architecture)
        if not can_dequantize(tensor.type):
            kind = GGMLQuantizationType(tensor.type).name
            raise ModelLoadError(
                f"{name} stores {tensor.name!r} as {kind}, which Counterfoil cannot dequantize: "
                f"it imports {SUPPORTED}; {ALTERNATIVE}"
            )
    model_config(architecture, header.metadata, {t.name: t.shape for t in header.tensors})
    return architecture


def _reporter(on_progress: ProgressCallback | None) -> Callable[[str], None]:
    def report(message: str) -> None:
        if on_progress is not None:
            on_progress(ModelProgress("loading", message=message))

    return report


def converter_command(source: Path, target: Path) -> list[str]:
    """The child process that converts `source` into the folder `target`."""
    return [sys.executable, "-m", "counterfoil.models.mlx.gguf_convert", str(source), str(target)]


def _convert_in_child(source: Path, target: Path, report: Callable[[str], None]) -> None:
    package_root = str(Path(__file__).resolve().parents[3])
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        part for part in (package_root, environment.get("PYTHONPATH")) if part
    )
    child = subprocess.Popen(
        converter_command(source, target),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment,
        text=True,
    )
    error: str | None = None
    done = False
    assert child.stdout is not None
    for line in child.stdout:
        try:
            message = json.loads(line)
        except ValueError:
            continue  # a library's own output
        if not isinstance(message, dict):
            continue
        if isinstance(message.get("progress"), str):
            report(message["progress"])
        elif isinstance(message.get("error"), str):
            error = message["error"]
        elif message.get("done") is True:
            done = True
    status = child.wait()
    if status < 0:
        raise ModelLoadError(
            f"importing {source.name} stopped the importer ({_signal_name(-status)}): the file "
            f"is damaged or holds what Counterfoil cannot read; {ALTERNATIVE}"
        )
    if error is not None:
        raise ModelLoadError(error)
    if status != 0 or not done:
        raise ModelLoadError(
            f"importing {source.name} failed (the importer exited with status {status}); "
            f"{ALTERNATIVE}"
        )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _folder_digests(folder: Path) -> dict[str, str]:
    return {
        entry.name: file_sha256(entry, use_cache=False)
        for entry in sorted(folder.iterdir())
        if entry.is_file() and entry.name != MANIFEST
    }


def _write_manifest(folder: Path, digest: str) -> None:
    manifest = {"format": IMPORT_FORMAT, "source_sha256": digest, "files": _folder_digests(folder)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def _publish(partial: Path, folder: Path, digest: str) -> None:
    """Rename the finished import into place. Another process importing the same file at the
    same time (two test workers, two editors) may have renamed its own there first: that one is
    complete and in use, so it stays and ours is dropped; only a damaged folder is replaced."""
    try:
        partial.rename(folder)
    except OSError:
        if _verified(folder, digest):
            return
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)


def _verified(folder: Path, digest: str) -> bool:
    """Whether `folder` is a complete import of the file with `digest`, its files unchanged."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if manifest.get("format") != IMPORT_FORMAT or manifest.get("source_sha256") != digest:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return False
    for name, expected in files.items():
        entry = folder / str(name)
        if not entry.is_file() or file_sha256(entry) != expected:
            return False
    return True
