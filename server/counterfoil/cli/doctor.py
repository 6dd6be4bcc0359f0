"""`counterfoil doctor`: what this Python can run, in one report a person can read.

The editor's Check Setup runs it with the daemon's own interpreter and environment, so what it
reports is what the daemon would find: the Python, the packages and their versions, the MLX
backend (and on Linux whether OpenBLAS is loaded), the models in the Hugging Face cache, the
model server if one is given (and which variable its key comes from, and which host it goes
to: never the key), the receipt log's health, and, given the editor's settings by where they were
written (`--settings`), every value the folder set that was narrowed, ignored or is waiting for
the person's yes. Nothing here installs anything.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from ..models import mlx_checks
from ..models.hub.availability import Check, endpoint_check, hub_cache_dir, model_check
from ..models.hub.model_names import SHORT_NAMES
from ..receipts import verify_receipt_log
from ..settings.endpoints import DEFAULT_API_KEY_ENV, may_carry_key
from ..settings.layers import LayeredSettings, layered_settings
from ..settings.table import Settings, SettingsError

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


def key_check(endpoint: str, api_key_env: str | None) -> Check:
    """Which variable the key comes from and which host it goes to; never the key."""
    variable = api_key_env or DEFAULT_API_KEY_ENV
    host = urlsplit(endpoint).hostname or endpoint
    if not os.environ.get(variable):
        named = api_key_env is not None
        detail = f"{variable} is not set" + ("" if named else ": no key is sent")
        return Check("model server key", detail, not named)
    if not may_carry_key(endpoint):
        return Check(
            "model server key",
            f"{variable} is set, but {host} is plain http:// to another machine: the key is "
            "never sent there (use https:// or an SSH tunnel)",
            False,
        )
    return Check("model server key", f"{variable} is set; it is sent only to {host}")


def refused_setting_checks(layered: LayeredSettings) -> list[Check]:
    """One line for each of the person's values a check refused, and what is used instead."""
    return [Check("your setting", item.line(), False) for item in layered.refused]


def folder_setting_checks(layered: LayeredSettings) -> list[Check]:
    """One line for each value the workspace or folder set that is not the person's."""
    checks = []
    for value in layered.folder_values:
        shown = json.dumps(value.value)
        what = {
            "applies": "applies",
            "narrowed": "applies (narrows yours)",
            "ignored": "ignored (yours kept)",
            "waiting": "waiting for your yes (yours kept)",
            "granted": f"applies ({'walkthrough' if value.origin == 'walkthrough' else 'you confirmed it'})",
        }[value.outcome]
        why = value.problem or value.rule
        checks.append(Check(f"{value.source} setting", f"{value.key} = {shown}: {what}; {why}"))
    return checks


def run_checks(
    root: Path | None,
    receipt_log: str,
    endpoint: str | None,
    model: str | None = None,
    api_key_env: str | None = None,
) -> list[Check]:
    checks = [python_check(), *package_checks(), *mlx_checks()]
    checks.append(model_cache_check())
    if endpoint:
        checks.append(endpoint_check(endpoint))
        checks.append(key_check(endpoint, api_key_env))
    elif model:
        checks.append(model_check(model))
    if root is not None:
        checks.append(receipt_log_check(root, receipt_log))
    return checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", type=Path, default=None, help="project folder (receipt log)")
    parser.add_argument("--receipt-log", default=None, help="default .counterfoil/receipts.jsonl")
    parser.add_argument("--endpoint", default=None, help="a model server URL to try")
    parser.add_argument("--api-key-env", default=None, help="the variable its key is read from")
    parser.add_argument(
        "--model", default=None, help="the model a run would use: cached, local, or downloadable?"
    )
    parser.add_argument(
        "--settings",
        default=None,
        metavar="JSON",
        help="the settings as the editor sends them (each value by where it was written): "
        "checked for the root as the daemon would, the folder's values listed",
    )


def doctor_command(args: argparse.Namespace, stdout: TextIO) -> int:
    """Prints one line per check; exits 1 when any check found a problem."""
    layered = LayeredSettings(Settings())
    folder_checks: list[Check] = []
    if args.settings is not None:
        try:
            layered = layered_settings(json.loads(args.settings), args.root)
        except (ValueError, SettingsError) as error:  # JSON errors are ValueErrors too
            folder_checks.append(Check("settings", f"not usable: {error}", False))
        folder_checks += refused_setting_checks(layered) + folder_setting_checks(layered)
    settings = layered.settings
    endpoint = args.endpoint or settings.endpoint
    api_key_env = args.api_key_env or settings.api_key_env
    model = args.model or (settings.model if args.settings is not None else None)
    receipt_log = args.receipt_log or settings.receipt_log
    checks = run_checks(args.root, receipt_log, endpoint, model, api_key_env) + folder_checks
    stdout.writelines(
        f"{'ok ' if check.ok else 'BAD'} {check.name}: {check.detail}\n" for check in checks
    )
    problems = [check.name for check in checks if not check.ok]
    stdout.write(f"problems: {', '.join(problems)}\n" if problems else "no problems found\n")
    return 1 if problems else 0
