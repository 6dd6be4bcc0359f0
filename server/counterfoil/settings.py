"""The person's settings, decided once: defaults, checks and what they mean for a run.

The daemon (`initializationOptions`, `didChangeConfiguration`) and the CLI (its flags) both
build `Settings` with `Settings.from_mapping`, which takes the setting names of DESIGN.md
(`allowWrites`, `receiptLog`, …), ignores unknown keys, gives a missing or null key its
default, and refuses the whole mapping with a `SettingsError` that names every bad key.

Adding a setting is one line in `Settings`: `name: type = setting(default, "camelKey", check)`,
where `check(value)` returns the value in its Python shape or raises `Invalid("must …")`.
The key then travels through `from_mapping`, the CLI (map its flag to the key in
`cli.SETTING_FLAGS`) and the defaults the docs list.

One rule for the receipt log, in the CLI as in the daemon: a relative path stays inside the
root (no `..`) and is taken relative to it; an absolute path is taken as it is, so a person may
keep receipts outside the project. (The agent can never read or write the log either way.)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path, PurePosixPath
from typing import Any, TypeGuard, TypeVar

from .context import context_tokens, prompt_budget
from .endpoints import DEFAULT_TIMEOUT_SECONDS, SCHEMA_MODES, EndpointRefused, checked_endpoint
from .loop import AgentLimits
from .policy import ToolPolicy
from .receipts.content import OUTPUT_LIMIT_BYTES
from .tools import MAX_ARGV_ITEM_CHARS, MAX_ARGV_ITEMS, is_argv

DEFAULT_MODEL = "qwen3-4b"
DEFAULT_RECEIPT_LOG = ".counterfoil/receipts.jsonl"
MAX_STEPS_LIMIT = 10_000
MAX_TOKENS_LIMIT = 1_000_000
MAX_CONTEXT_TOKENS_LIMIT = 100_000_000
MAX_WRITE_BYTES_LIMIT = 64 * 1024 * 1024
MAX_COMMAND_OUTPUT_BYTES_LIMIT = 1024 * 1024 * 1024
MAX_SECONDS = 86_400
MAX_COMMANDS = 256
MAX_TEXT_CHARS = 4096
ENVIRONMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")

NO_COMMANDS: tuple[tuple[str, ...], ...] = ()
NO_PATTERNS: tuple[str, ...] = ()

T = TypeVar("T")


class SettingsError(ValueError):
    """Settings refused as a whole; the message names every bad key (`problems`, one each)."""

    def __init__(self, message: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems or (message,)


class Invalid(ValueError):
    """One value a check refuses: `detail` follows the key's name (`must be …`, `[2] must …`)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("must be a non-empty string")
    if len(value) > MAX_TEXT_CHARS or "\0" in value:
        raise Invalid(f"must be at most {MAX_TEXT_CHARS} characters without NUL")
    return value


def boolean(value: object) -> bool:
    if not isinstance(value, bool):
        raise Invalid("must be true or false")
    return value


def positive_int(limit: int) -> Callable[[object], int]:
    def check(value: object) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= limit:
            raise Invalid(f"must be an integer from 1 to {limit}")
        return value

    return check


def seconds(value: object) -> float:
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not math.isfinite(value)
        or not 0 < value <= MAX_SECONDS
    ):
        raise Invalid(f"must be a number of seconds above 0 and at most {MAX_SECONDS}")
    return float(value)


def commands(value: object) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, (list, tuple)) or len(value) > MAX_COMMANDS:
        raise Invalid(f"must be an array of at most {MAX_COMMANDS} argv arrays")
    for index, argv in enumerate(value):
        if not is_argv(argv, max_items=MAX_ARGV_ITEMS, max_item_chars=MAX_ARGV_ITEM_CHARS):
            raise Invalid(
                f"[{index}] must be a non-empty array of non-empty strings "
                '(an argv such as ["python", "-m", "pytest", "-q"])'
            )
    return tuple(tuple(argv) for argv in value)


def is_string_array(
    value: object, valid: Callable[[str], bool]
) -> TypeGuard[list[str] | tuple[str, ...]]:
    """An array of at most MAX_COMMANDS strings, each short, without NUL and `valid`."""
    return (
        isinstance(value, (list, tuple))
        and len(value) <= MAX_COMMANDS
        and all(
            isinstance(item, str)
            and "\0" not in item
            and len(item) <= MAX_TEXT_CHARS
            and valid(item)
            for item in value
        )
    )


def patterns(value: object) -> tuple[str, ...]:
    if not is_string_array(value, lambda pattern: bool(pattern.strip())):
        raise Invalid(
            f"must be an array of at most {MAX_COMMANDS} non-empty patterns "
            '(such as ["*.yaml", "deploy/prod.*"])'
        )
    return tuple(value)


def variable_names(value: object) -> tuple[str, ...]:
    if not is_string_array(value, lambda name: bool(name) and "=" not in name):
        raise Invalid("must be an array of environment variable names")
    return tuple(value)


def receipt_log(value: object) -> str:
    path = text(value)
    pure = PurePosixPath(path)
    if not pure.is_absolute() and ".." in pure.parts:
        raise Invalid("must be a relative path inside the root (no '..') or an absolute path")
    return path


def endpoint(value: object) -> str:
    try:  # the http:// opt-in is checked again when the model loads
        return checked_endpoint(text(value), allow_insecure_http=True)
    except EndpointRefused as error:
        raise Invalid(f"must be a usable URL ({error})") from None


def environment_name(value: object) -> str:
    """Only the variable's name is a setting; a value that looks like a key is not echoed."""
    if not isinstance(value, str) or not ENVIRONMENT_NAME.fullmatch(value):
        raise Invalid("must be the name of an environment variable (not the key)")
    return value


def schema_mode(value: object) -> str:
    if value not in SCHEMA_MODES:
        raise Invalid(f"must be one of {', '.join(SCHEMA_MODES)}")
    return str(value)


def setting(default: T, key: str, check: Callable[[object], T]) -> Any:
    """A settings field: its default, its key in settings objects, and its check."""
    return field(default=default, metadata={"key": key, "check": check})


@dataclass(frozen=True)
class Settings:
    model: str = setting(DEFAULT_MODEL, "model", text)
    allow_writes: bool = setting(False, "allowWrites", boolean)
    allowed_commands: tuple[tuple[str, ...], ...] = setting(
        NO_COMMANDS, "allowedCommands", commands
    )
    receipt_log: str = setting(DEFAULT_RECEIPT_LOG, "receiptLog", receipt_log)
    max_write_bytes: int = setting(64 * 1024, "maxWriteBytes", positive_int(MAX_WRITE_BYTES_LIMIT))
    command_timeout_seconds: float = setting(30.0, "commandTimeoutSeconds", seconds)
    max_steps: int = setting(8, "maxSteps", positive_int(MAX_STEPS_LIMIT))
    max_tokens: int = setting(1024, "maxTokens", positive_int(MAX_TOKENS_LIMIT))
    constrained_decoding: bool = setting(True, "constrainedDecoding", boolean)
    confirm_timeout_seconds: float = setting(600.0, "confirmTimeoutSeconds", seconds)
    protected_patterns: tuple[str, ...] = setting(NO_PATTERNS, "protectedPatterns", patterns)
    pass_environment: tuple[str, ...] = setting(NO_PATTERNS, "passEnvironment", variable_names)
    limit_cpu_seconds: int | None = setting(None, "limitCpuSeconds", positive_int(10**9))
    limit_memory_bytes: int | None = setting(None, "limitMemoryBytes", positive_int(2**62))
    limit_processes: int | None = setting(None, "limitProcesses", positive_int(10**7))
    endpoint: str | None = setting(None, "endpoint", endpoint)
    api_key_env: str | None = setting(None, "apiKeyEnv", environment_name)
    allow_insecure_http: bool = setting(False, "allowInsecureHttp", boolean)
    schema_mode: str = setting("json_schema", "schemaMode", schema_mode)
    endpoint_timeout_seconds: float = setting(
        DEFAULT_TIMEOUT_SECONDS, "endpointTimeoutSeconds", seconds
    )
    search_files: bool = setting(True, "searchFiles", boolean)
    # The model's context window in tokens; for model servers, which do not state it.
    context_tokens: int | None = setting(
        None, "contextTokens", positive_int(MAX_CONTEXT_TOKENS_LIMIT)
    )
    max_command_output_bytes: int = setting(
        OUTPUT_LIMIT_BYTES, "maxCommandOutputBytes", positive_int(MAX_COMMAND_OUTPUT_BYTES_LIMIT)
    )

    @classmethod
    def from_mapping(cls, raw: object, *, names: Mapping[str, str] | None = None) -> Settings:
        """Settings from a mapping of setting keys (None: the defaults), or SettingsError naming
        every bad key.

        `names` renames keys in the error (the CLI names its flags, `--max-steps`).
        """
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise SettingsError("counterfoil settings must be an object")
        values: dict[str, Any] = {}
        problems: list[str] = []
        for item in fields(cls):
            key = item.metadata["key"]
            value = raw.get(key)
            if value is None:
                continue
            try:
                values[item.name] = item.metadata["check"](value)
            except Invalid as invalid:
                name = (names or {}).get(key, key)
                gap = "" if invalid.detail.startswith("[") else " "
                problems.append(f"{name}{gap}{invalid.detail}")
        if problems:
            message = "invalid Counterfoil settings: " + "; ".join(problems)
            raise SettingsError(message, tuple(problems))
        return cls(**values)

    @classmethod
    def default(cls, key: str) -> Any:
        """The default of the setting spelled `key` (e.g. `maxSteps`), for help texts."""
        for item in fields(cls):
            if item.metadata["key"] == key and item.default is not MISSING:
                return item.default
        raise KeyError(key)

    def policy(self, root: Path) -> ToolPolicy:
        """The policy for `root`; raises ValueError when the root cannot be used."""
        return ToolPolicy(
            root=root,
            allow_writes=self.allow_writes,
            allowed_commands=self.allowed_commands,
            max_write_bytes=self.max_write_bytes,
            command_timeout_seconds=self.command_timeout_seconds,
            protected_patterns=self.protected_patterns,
            pass_environment=self.pass_environment,
            limit_cpu_seconds=self.limit_cpu_seconds,
            limit_memory_bytes=self.limit_memory_bytes,
            limit_processes=self.limit_processes,
            allow_search=self.search_files,
            max_command_output_bytes=self.max_command_output_bytes,
        )

    def limits(self, model: object = None) -> AgentLimits:
        """The run's limits. Its context window is `contextTokens` when set (less room for one
        response), else the one `model` states; with neither, the course's character limit."""
        if self.context_tokens is not None:
            window: int | None = prompt_budget(self.context_tokens, self.max_tokens)
        else:
            window = context_tokens(model)
        return AgentLimits(max_steps=self.max_steps, max_context_tokens=window)

    def receipt_log_path(self, root: Path) -> Path:
        """The log path: a relative one is relative to `root`, an absolute one is kept."""
        path = Path(self.receipt_log)
        return path if path.is_absolute() else root / path
