"""`counterfoil doctor`: what this Python can run, in one report a person can read.

The editor's Check Setup runs it with the daemon's own interpreter and environment, so what it
reports is what the daemon would find: the Python, the packages and their versions, the MLX
backend (and on Linux whether OpenBLAS is loaded), the models in the Hugging Face cache, the
model server if one is given, and the receipt log's health. Nothing here installs anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TextIO

from ..models.errors import ModelLoadError
from ..models.model_names import SHORT_NAMES, resolve_model
from ..receipts import verify_receipt_log

MINIMUM_PYTHON = (3, 11)
DAEMON_PACKAGES = ("pygls", "lsprotocol", "attrs", "cattrs", "typing_extensions")
MODEL_PACKAGES = ("mlx", "mlx-lm", "llguidance", "numpy", "huggingface_hub")


@dataclass(frozen=True)
class Check:
    name: str
    detail: str
    ok: bool = True


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


def hub_cache_dir() -> Path:
    """Where huggingface_hub keeps models, by its own environment variables."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "huggingface"
    )
    return Path(home) / "hub"


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


def model_check(spec: str, timeout: float = 5.0) -> Check:
    """Whether the model the run would use can be had: scripted, a local folder, in the hub
    cache, or the hub reachable to download it. Neither cached nor reachable is a problem: the
    first run would stop there."""
    if spec.startswith("scripted:"):
        return Check("model", f"{spec}: scripted, nothing to download")
    if Path(spec).expanduser().is_dir():
        return Check("model", f"{spec}: a local folder")
    if spec.strip().lower().endswith(".gguf"):
        if not Path(spec).expanduser().is_file():
            return Check("model", f"{spec}: GGUF file does not exist", False)
        return Check("model", f"{spec}: a GGUF file, imported into an MLX folder on first use")
    try:
        repo = resolve_model(spec).location
    except ModelLoadError as error:
        return Check("model", f"{spec}: {error}", False)
    if any((hub_cache_dir() / f"models--{repo.replace('/', '--')}" / "snapshots").glob("*")):
        return Check("model", f"{spec} ({repo}): in the hub cache")
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return Check("model", f"{spec} ({repo}): not cached, and HF_HUB_OFFLINE is set", False)
    hub = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    reachable = endpoint_check(hub, timeout)
    if not reachable.ok:
        return Check(
            "model",
            f"{spec} ({repo}): neither in the hub cache nor downloadable ({hub} is not "
            "reachable); choose a local folder, a model server or the scripted demo",
            False,
        )
    return Check("model", f"{spec} ({repo}): not cached; downloaded from {hub} on the first run")


def endpoint_check(url: str, timeout: float = 5.0) -> Check:
    """Reachable means any HTTP answer; only a failed connection is a problem."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return Check("endpoint", f"{url} answers (HTTP {response.status})")
    except urllib.error.HTTPError as error:
        return Check("endpoint", f"{url} answers (HTTP {error.code})")
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return Check("endpoint", f"{url} is not reachable: {reason}", False)


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
