"""Whether this Python can run the chosen model, and the command that would make it so.

A hub or local model runs in-process on MLX; an endpoint is reached with the remote client. The
editor's bundle carries neither (native wheels), so the person is offered the install command
for the environment the daemon runs in. Nothing here installs anything.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import site
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .engine_choice import LLAMA_CPP, engine_for
from .scripted import SCRIPTED_PREFIX

DISTRIBUTION = "counterfoil"

# The modules each extra of pyproject.toml provides, as imported by models/mlx/mlx.py,
# models/server/remote.py and models/llamacpp/llamacpp.py.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "mlx": ("mlx.core", "mlx_lm", "llguidance"),
    "remote": ("httpx",),
    "llamacpp": ("xllamacpp", "httpx"),
}

_EXTRA_MARKER = re.compile(r"""\s*(?:and\s+)?extra\s*==\s*["']([\w.-]+)["']\s*""")

# Platforms MLX publishes no build for: installing the extra there cannot make a model run.
NO_MLX_BUILD = {"win32": "Windows", "cygwin": "Windows"}


@dataclass(frozen=True)
class MissingRuntime:
    """The extra a model needs, the modules this Python lacks, and how to install them."""

    extra: str
    modules: tuple[str, ...]
    python: str
    command: tuple[str, ...]
    unavailable: str | None = None  # why no install can help here (no MLX build)

    @property
    def message(self) -> str:
        if self.unavailable:
            return self.unavailable
        return (
            f"the model runtime is not installed in {self.python} "
            f"(missing {', '.join(self.modules)}); install it with: {shlex.join(self.command)}"
        )


def current_platform() -> str:
    """`sys.platform`, asked where the runtime is decided (tests set it per call)."""
    return sys.platform


def mlx_unavailable(platform: str | None = None) -> str | None:
    """Why an MLX model cannot run on `platform` (default: this one), or None where it can."""
    name = NO_MLX_BUILD.get(platform or current_platform())
    if name is None:
        return None
    return (
        f"MLX has no build for {name}, so a local MLX model cannot run here: use a model server "
        "(the endpoint setting or --endpoint: LM Studio, Ollama or llama.cpp's llama-server on "
        "this machine, vLLM or SGLang on another) or the scripted model (scripted:PATH)"
    )


def needed_extra(spec: str, *, endpoint: str | None = None, engine: str = "mlx") -> str | None:
    """`remote` for an endpoint, None for a scripted model, `llamacpp` for the llama.cpp
    engine (`auto` chooses as `counterfoil.models.engine_choice` says), else `mlx`."""
    if endpoint:
        return "remote"
    if spec.startswith(SCRIPTED_PREFIX):
        return None
    return "llamacpp" if engine_for(spec, engine) == LLAMA_CPP else "mlx"


def missing_runtime(
    spec: str, *, endpoint: str | None = None, python: str | None = None, engine: str = "mlx"
) -> MissingRuntime | None:
    """What this environment lacks to run `spec`, or None when it has it all."""
    extra = needed_extra(spec, endpoint=endpoint, engine=engine)
    if extra is None:
        return None
    missing = tuple(module for module in EXTRA_MODULES[extra] if not _importable(module))
    if not missing:
        return None
    python = python or sys.executable
    unavailable = mlx_unavailable() if extra == "mlx" else None
    if unavailable:
        return MissingRuntime(extra, missing, python, (), unavailable)
    return MissingRuntime(extra, missing, python, install_command(extra, python=python))


def install_command(extra: str, *, python: str | None = None) -> tuple[str, ...]:
    """`python -m pip install …` for `extra`, into the environment of `python`.

    An installed counterfoil (in that environment's site-packages) is named with its extra, so
    pip resolves it from the installed metadata; a bundled copy (on PYTHONPATH only) is not
    installed there, so its extra's requirements are listed instead, as its metadata pins them.
    """
    python = python or sys.executable
    prefix = (python, "-m", "pip", "install")
    if _installed_in_site_packages():
        return (*prefix, f"{DISTRIBUTION}[{extra}]")
    requirements = extra_requirements(extra)
    if not requirements:
        return (*prefix, f"{DISTRIBUTION}[{extra}]")
    return (*prefix, *requirements)


def extra_requirements(extra: str) -> list[str]:
    """The requirements `extra` adds, from the distribution's metadata or pyproject.toml."""
    try:
        declared = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        declared = []
    found = []
    for requirement in declared:
        text, _, marker = requirement.partition(";")
        names = _EXTRA_MARKER.findall(marker)
        if extra not in names:
            continue
        rest = _EXTRA_MARKER.sub(" ", marker).strip()
        rest = re.sub(r"^\s*and\s+|\s+and\s*$", "", rest).strip()
        found.append(f"{text.strip()}; {rest}" if rest else text.strip())
    return found or _pyproject_requirements(extra)


def _pyproject_requirements(extra: str) -> list[str]:
    import tomllib

    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return []
    extras = data.get("project", {}).get("optional-dependencies", {})
    return [str(requirement) for requirement in extras.get(extra, [])]


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _installed_in_site_packages() -> bool:
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return False
    location = Path(str(distribution.locate_file(""))).resolve()
    roots = [*site.getsitepackages(), site.getusersitepackages()]
    return any(location == Path(root).resolve() for root in roots)


def runtime_report(
    spec: str, *, endpoint: str | None = None, engine: str = "mlx"
) -> dict[str, object]:
    """`{model, extra, missing, python, command, unavailable}`: what `spec` needs and what this
    Python lacks; `unavailable` says why no install can help (no MLX build for this platform).

    `extra` is null when the model needs none (a script); `missing` is empty and `command`
    null when everything is installed.
    """
    extra = needed_extra(spec, endpoint=endpoint, engine=engine)
    need = missing_runtime(spec, endpoint=endpoint, engine=engine)
    return {
        "model": spec,
        "extra": extra,
        "missing": [] if need is None else list(need.modules),
        "python": sys.executable,
        "command": None if need is None else list(need.command),
        "unavailable": None if need is None else need.unavailable,
    }
