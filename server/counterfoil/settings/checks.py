"""The checks a setting's value passes: each returns the value in its Python shape or raises
`Invalid("must …")`, whose detail follows the setting's name in the error. Here too: `setting`,
which makes one row of the settings table, and the JSON schemas rows share."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import PurePosixPath
from typing import Any, TypeGuard, TypeVar

from ..commands.tree.sandbox import SANDBOX_MODES
from ..context.budget import MIN_INLINE_CHARS
from ..gate.syntax import FORMATS
from ..mcp.servers import McpServer, ServerSettingInvalid, parse_servers
from ..tools import EDIT_FORMS, MAX_ARGV_ITEM_CHARS, MAX_ARGV_ITEMS, is_argv
from .endpoints import SCHEMA_MODES, EndpointRefused, checked_endpoint
from .folder_rules import FolderRule

MAX_SECONDS = 86_400
MAX_COMMANDS = 256
MAX_TEXT_CHARS = 4096
MAX_INLINE_CHARS_LIMIT = 100_000_000
ENGINES = ("auto", "mlx", "llama.cpp")  # how a local model runs (`counterfoil.models`)
ENVIRONMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


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


def parsed_files(value: object) -> tuple[str, ...]:
    """`PATTERN=FORMAT` items: the files matching a pattern must parse as that format."""

    def valid(item: str) -> bool:
        pattern, equals, kind = item.rpartition("=")
        return bool(equals and pattern.strip() and kind.strip().lower() in FORMATS)

    if not is_string_array(value, valid):
        raise Invalid(
            f"must be an array of PATTERN=FORMAT items, FORMAT one of {', '.join(FORMATS)} "
            '(such as ["*.babelrc=json", "Pipfile=toml"])'
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


def engine_name(value: object) -> str:
    if value not in ENGINES:
        raise Invalid(f"must be one of {', '.join(ENGINES)}")
    return str(value)


def edit_form(value: object) -> str:
    if value not in EDIT_FORMS:
        raise Invalid(f"must be one of {', '.join(EDIT_FORMS)}")
    return str(value)


def sandbox_mode(value: object) -> str:
    if value not in SANDBOX_MODES:
        raise Invalid(f"must be one of {', '.join(SANDBOX_MODES)}")
    return str(value)


def inline_chars(value: object) -> int:
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or not MIN_INLINE_CHARS <= value <= MAX_INLINE_CHARS_LIMIT
    ):
        raise Invalid(f"must be an integer from {MIN_INLINE_CHARS} to {MAX_INLINE_CHARS_LIMIT}")
    return value


def mcp_servers(value: object) -> tuple[McpServer, ...]:
    try:
        return parse_servers(value)
    except ServerSettingInvalid as error:
        raise Invalid(str(error)) from None


T = TypeVar("T")


SECONDS_SCHEMA = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_SECONDS}
COUNT_SCHEMA = {"type": "integer", "minimum": 1}
OPTIONAL_COUNT_SCHEMA = {"type": ["integer", "null"]}
NAMES_SCHEMA = {"type": "array", "items": {"type": "string"}}


def setting(
    default: T,
    key: str,
    check: Callable[[object], T],
    *,
    schema: Mapping[str, Any],
    description: str,
    flag: str | None = None,
    help: str | None = None,
    metavar: str | None = None,
    choices: tuple[str, ...] | None = None,
    group: str | None = None,
    folder: FolderRule,
) -> Any:
    """A settings field, every fact about it in one place: its default, its key in settings
    objects and its check; for the editor, its JSON schema (`schema`, without the default and
    the enum, which come from here) and its Markdown `description`; for the CLI, its `flag`,
    `help` (`{default}` is filled in), `metavar`, `choices` and the help `group`; `folder`: what
    a folder's value may do (`folder_rules.py`), from which the editor's `scope` follows."""
    return field(
        default=default,
        metadata={
            "key": key,
            "check": check,
            "schema": schema,
            "description": description,
            "flag": flag,
            "help": help,
            "metavar": metavar,
            "choices": choices,
            "group": group,
            "folder": folder,
        },
    )
