"""The daemon's settings: parsed and checked in one place, so a bad value never reaches a run.

The client sends the settings object without its `counterfoil.` prefix, either as
`initializationOptions` or inside `workspace/didChangeConfiguration`. Unknown keys are
ignored and a missing (or null) key takes its default, so writes stay off and no command is
allowed unless the person says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..models.endpoint import SCHEMA_MODES, checked_endpoint
from ..models.errors import ModelLoadError
from ..policy import ToolPolicy

DEFAULT_MODEL = "qwen3-4b"
DEFAULT_RECEIPT_LOG = ".counterfoil/receipts.jsonl"
MAX_STEPS_LIMIT = 10_000
MAX_COMMANDS = 256
MAX_ARGV_ITEMS = 256
MAX_TEXT_CHARS = 4096
ENVIRONMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class SettingsError(ValueError):
    """Settings the daemon refuses; the message names every bad key."""


@dataclass(frozen=True)
class Settings:
    model: str = DEFAULT_MODEL
    allow_writes: bool = False
    allowed_commands: tuple[tuple[str, ...], ...] = ()
    receipt_log: str = DEFAULT_RECEIPT_LOG
    max_write_bytes: int = 64 * 1024
    command_timeout_seconds: float = 30.0
    max_steps: int = 8
    max_tokens: int = 1024
    constrained_decoding: bool = True
    confirm_timeout_seconds: float = 600.0
    endpoint: str | None = None
    api_key_env: str | None = None
    allow_insecure_http: bool = False
    schema_mode: str = "json_schema"

    def policy(self, root: Path) -> ToolPolicy:
        return ToolPolicy(
            root=root,
            allow_writes=self.allow_writes,
            allowed_commands=self.allowed_commands,
            max_write_bytes=self.max_write_bytes,
            command_timeout_seconds=self.command_timeout_seconds,
        )

    def receipt_log_path(self, root: Path) -> Path:
        """The log path; a relative one is relative to the workspace root."""
        path = Path(self.receipt_log)
        return path if path.is_absolute() else root / path


def _text(value: Any, name: str, problems: list[str]) -> str | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{name} must be a non-empty string")
        return None
    if len(value) > MAX_TEXT_CHARS or "\0" in value:
        problems.append(f"{name} must be at most {MAX_TEXT_CHARS} characters without NUL")
        return None
    return value


def _boolean(value: Any, name: str, problems: list[str]) -> bool | None:
    if not isinstance(value, bool):
        problems.append(f"{name} must be true or false")
        return None
    return value


def _positive_int(value: Any, name: str, problems: list[str], limit: int) -> int | None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= limit:
        problems.append(f"{name} must be an integer from 1 to {limit}")
        return None
    return value


def _positive_seconds(value: Any, name: str, problems: list[str]) -> float | None:
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
        or value > 86_400
    ):
        problems.append(f"{name} must be a number of seconds above 0 and at most 86400")
        return None
    return float(value)


def _commands(value: Any, problems: list[str]) -> tuple[tuple[str, ...], ...] | None:
    name = "allowedCommands"
    if not isinstance(value, list) or len(value) > MAX_COMMANDS:
        problems.append(f"{name} must be an array of at most {MAX_COMMANDS} argv arrays")
        return None
    commands: list[tuple[str, ...]] = []
    for index, argv in enumerate(value):
        if (
            not isinstance(argv, list)
            or not argv
            or len(argv) > MAX_ARGV_ITEMS
            or not all(
                isinstance(part, str) and part and "\0" not in part and len(part) <= MAX_TEXT_CHARS
                for part in argv
            )
        ):
            problems.append(
                f"{name}[{index}] must be a non-empty array of non-empty strings "
                '(an argv such as ["python", "-m", "pytest", "-q"])'
            )
            return None
        commands.append(tuple(argv))
    return tuple(commands)


def _endpoint(value: Any, problems: list[str]) -> str | None:
    text = _text(value, "endpoint", problems)
    if text is None:
        return None
    try:  # the http:// opt-in is checked again when the model loads
        return checked_endpoint(text, allow_insecure_http=True)
    except ModelLoadError as error:
        problems.append(f"endpoint: {error}")
        return None


def _environment_name(value: Any, problems: list[str]) -> str | None:
    """Only the variable's name is a setting; a value that looks like a key is not echoed."""
    if not isinstance(value, str) or not ENVIRONMENT_NAME.fullmatch(value):
        problems.append("apiKeyEnv must be the name of an environment variable (not the key)")
        return None
    return value


def _schema_mode(value: Any, problems: list[str]) -> str | None:
    if value not in SCHEMA_MODES:
        problems.append(f"schemaMode must be one of {', '.join(SCHEMA_MODES)}")
        return None
    return str(value)


def _receipt_log(value: Any, problems: list[str]) -> str | None:
    text = _text(value, "receiptLog", problems)
    if text is None:
        return None
    if not PurePosixPath(text).is_absolute() and ".." in PurePosixPath(text).parts:
        problems.append("receiptLog must stay inside the workspace (no '..')")
        return None
    return text


def parse_settings(raw: Any) -> Settings:
    """Turn a client's settings object into Settings, or raise naming every bad key."""
    if raw is None:
        return Settings()
    if not isinstance(raw, dict):
        raise SettingsError("counterfoil settings must be an object")
    defaults = Settings()
    problems: list[str] = []
    values: dict[str, Any] = {}
    checks: dict[str, tuple[str, Any]] = {
        "model": ("model", lambda v: _text(v, "model", problems)),
        "allowWrites": ("allow_writes", lambda v: _boolean(v, "allowWrites", problems)),
        "allowedCommands": ("allowed_commands", lambda v: _commands(v, problems)),
        "receiptLog": ("receipt_log", lambda v: _receipt_log(v, problems)),
        "maxWriteBytes": (
            "max_write_bytes",
            lambda v: _positive_int(v, "maxWriteBytes", problems, 64 * 1024 * 1024),
        ),
        "commandTimeoutSeconds": (
            "command_timeout_seconds",
            lambda v: _positive_seconds(v, "commandTimeoutSeconds", problems),
        ),
        "maxSteps": (
            "max_steps",
            lambda v: _positive_int(v, "maxSteps", problems, MAX_STEPS_LIMIT),
        ),
        "maxTokens": ("max_tokens", lambda v: _positive_int(v, "maxTokens", problems, 1_000_000)),
        "constrainedDecoding": (
            "constrained_decoding",
            lambda v: _boolean(v, "constrainedDecoding", problems),
        ),
        "confirmTimeoutSeconds": (
            "confirm_timeout_seconds",
            lambda v: _positive_seconds(v, "confirmTimeoutSeconds", problems),
        ),
        "endpoint": ("endpoint", lambda v: _endpoint(v, problems)),
        "apiKeyEnv": ("api_key_env", lambda v: _environment_name(v, problems)),
        "allowInsecureHttp": (
            "allow_insecure_http",
            lambda v: _boolean(v, "allowInsecureHttp", problems),
        ),
        "schemaMode": ("schema_mode", lambda v: _schema_mode(v, problems)),
    }
    for key, (field_name, check) in checks.items():
        value = raw.get(key)
        if value is None:
            values[field_name] = getattr(defaults, field_name)
            continue
        checked = check(value)
        if checked is not None:
            values[field_name] = checked
    if problems:
        raise SettingsError("invalid Counterfoil settings: " + "; ".join(problems))
    return Settings(**values)


def settings_from_configuration(params_settings: Any) -> Settings | None:
    """The `counterfoil` section of a didChangeConfiguration payload; None when absent."""
    if not isinstance(params_settings, dict) or "counterfoil" not in params_settings:
        return None
    return parse_settings(params_settings["counterfoil"])
