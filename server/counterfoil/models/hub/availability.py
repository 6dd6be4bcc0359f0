"""Whether a model can be had before a run needs it: scripted, a local folder or GGUF file, in
the Hugging Face cache, or its hub (or a model server) reachable. The terminal's doctor and the
daemon's setup check ask the same question here."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelLoadError
from .model_names import resolve_model


@dataclass(frozen=True)
class Check:
    name: str
    detail: str
    ok: bool = True


def hub_cache_dir() -> Path:
    """Where huggingface_hub keeps models, by its own environment variables."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "huggingface"
    )
    return Path(home) / "hub"


def gguf_check(spec: str) -> Check:
    """Whether the GGUF file's header is one the import takes (read in a moment, before any
    import)."""
    try:
        from ..gguf.gguf_header import read_gguf_header
        from ..gguf.gguf_import import check_importable

        check_importable(read_gguf_header(Path(spec).expanduser()), Path(spec).name)
    except ImportError:
        pass  # the mlx extra is not installed: the load says so
    except ModelLoadError as error:
        return Check("model", f"{spec}: {error}", False)
    return Check("model", f"{spec}: a GGUF file, imported into an MLX folder on first use")


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
        return gguf_check(spec)
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
