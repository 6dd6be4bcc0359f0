"""`counterfoil doctor`: what this Python can run, in one report a person can read.

The editor's Check Setup runs it with the daemon's own interpreter and environment, so what it
reports is what the daemon would find: the Python, the packages and their versions, the MLX
backend (and on Linux whether OpenBLAS is loaded), the models in the Hugging Face cache, the
model server if one is given, and the receipt log's health. Nothing here installs anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from importlib import metadata
from pathlib import Path
from typing import TextIO

from ..models.availability import Check, endpoint_check, hub_cache_dir, model_check
from ..models.model_names import SHORT_NAMES
from ..receipts import verify_receipt_log

MINIMUM_PYTHON = (3, 11)
DAEMON_PACKAGES = ("pygls", "lsprotocol", "attrs", "cattrs", "typing_extensions")
MODEL_PACKAGES = ("mlx", "mlx-lm", "llguidance", "numpy", "huggingface_hub")


def python_check() -> Check:
    version = ".".join(str(part) for part in sys.version_info[:3])
    return Check("python", f"{version} at {sys.executable}", sys.version_info >= MINIMUM_PYTHON)


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def package_checks() -> list[Check]:
    location = Path(__file__).resolve().parents[1]  # the package, not this folder
    checks = [Check("counterfoil", f"{package_version('counterfoil') or 'source'} at {location}")]
    for name in DAEMON_PACKAGES:
        version = package_version(name)
        checks.append(Check(name, version or "missing (the daemon needs it)", version is not None))
    for name in MODEL_PACKAGES:
        checks.append(Check(name, package_version(name) or "not installed"))
    return checks


def loaded_openblas() -> str | None:
    """The OpenBLAS library this process has mapped (Linux), if any."""
    try:
        maps = Path("/proc/self/maps").read_text(errors="replace")
    except OSError:
        return None
    for line in maps.splitlines():
        if "openblas" in line.lower():
            return line.split()[-1]
    return None


def mlx_check() -> Check:
    if importlib.util.find_spec("mlx") is None:
        return Check("mlx backend", "MLX is not installed (scripted and endpoint models only)")
    try:
        import mlx.core as mx
    except Exception as error:  # noqa: BLE001 - a broken install is a finding, not a crash
        return Check("mlx backend", f"MLX does not import: {error}", False)
    if mx.metal.is_available():
        backend = "Metal"
    elif getattr(mx, "cuda", None) is not None and mx.cuda.is_available():
        backend = "CUDA"
    else:
        backend = "CPU"
    if sys.platform.startswith("linux"):
        blas = loaded_openblas()
        backend += f"; OpenBLAS {'in use: ' + blas if blas else 'not loaded'}"
    return Check("mlx backend", backend)


def cpu_path_check() -> Check:
    """Which path a local model takes on this machine: the GPU, or the CPU's float path with
    OpenBLAS or MLX's bundled BLAS (informational: every path works)."""
    try:
        import mlx.core as mx
    except ImportError:
        return Check("compute", "MLX not installed: no local model")
    from ..models.cpu_path import OPENBLAS

    if mx.default_device() == mx.gpu:
        return Check("compute", "GPU: quantized weights run as stored")
    if OPENBLAS.is_file():
        return Check(
            "compute",
            f"CPU: quantized weights dequantized to float32 at load, OpenBLAS ({OPENBLAS}, "
            "preloaded by counterfoil)",
        )
    return Check(
        "compute",
        "CPU: quantized weights run as stored (no OpenBLAS: install libopenblas0-pthread for "
        "the float32 path, about 10x faster prefill)",
    )


def model_cache_check() -> Check:
    cache = hub_cache_dir()
    present = [
        name
        for name, repo in SHORT_NAMES.items()
        if any((cache / f"models--{repo.replace('/', '--')}" / "snapshots").glob("*"))
    ]
    return Check("model cache", f"{cache}: {', '.join(present) or 'no known model downloaded'}")


def receipt_log_check(root: Path, receipt_log: str) -> Check:
    path = Path(receipt_log) if Path(receipt_log).is_absolute() else root / receipt_log
    if not path.exists():
        return Check("receipt log", f"{path}: none yet")
    report = verify_receipt_log(path)
    if report.ok:
        return Check("receipt log", f"{path}: ok, {report.count} receipts verified")
    return Check("receipt log", f"{path}: does not verify: {report.error}", False)


def run_checks(
    root: Path | None, receipt_log: str, endpoint: str | None, model: str | None = None
) -> list[Check]:
    checks = [python_check(), *package_checks(), mlx_check(), cpu_path_check()]
    checks.append(model_cache_check())
    if endpoint:
        checks.append(endpoint_check(endpoint))
    elif model:
        checks.append(model_check(model))
    if root is not None:
        checks.append(receipt_log_check(root, receipt_log))
    return checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", type=Path, default=None, help="project folder (receipt log)")
    parser.add_argument("--receipt-log", default=".counterfoil/receipts.jsonl")
    parser.add_argument("--endpoint", default=None, help="a model server URL to try")
    parser.add_argument(
        "--model", default=None, help="the model a run would use: cached, local, or downloadable?"
    )


def doctor_command(args: argparse.Namespace, stdout: TextIO) -> int:
    """Prints one line per check; exits 1 when any check found a problem."""
    checks = run_checks(args.root, args.receipt_log, args.endpoint, args.model)
    stdout.writelines(
        f"{'ok ' if check.ok else 'BAD'} {check.name}: {check.detail}\n" for check in checks
    )
    problems = [check.name for check in checks if not check.ok]
    stdout.write(f"problems: {', '.join(problems)}\n" if problems else "no problems found\n")
    return 1 if problems else 0
