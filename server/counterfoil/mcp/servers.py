"""The MCP servers a person configured (the `mcpServers` setting, the person's alone: a
folder's settings never add one): each a stdio command run confined, or a streamable HTTP URL.

One entry: `{"name": "files", "command": ["python", "server.py"], "network": false,
"passEnvironment": [], "readOnlyTools": ["read"], "timeoutSeconds": 30}` or
`{"name": "docs", "url": "https://…/mcp", "readOnlyTools": []}`. A `url` follows the model
endpoint's rules (`url_rules.py`): plain `http://` only to this machine unless the
entry says `"allowInsecureHttp": true`, and the environment's proxy only with
`"useEnvironmentProxy": true`."""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from ..receipts import canonical_json
from ..tools import MAX_ARGV_ITEM_CHARS, MAX_ARGV_ITEMS, is_argv
from ..url_rules import insecure_http

SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-/]{1,128}")
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
MAX_SERVERS = 32
MAX_LISTED = 256
DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_START_SECONDS = 60.0  # a first start may fetch the server (npx, uvx)
MAX_TIMEOUT_SECONDS = 3600.0
KEYS = frozenset(
    {
        "name",
        "command",
        "url",
        "network",
        "passEnvironment",
        "readOnlyTools",
        "timeoutSeconds",
        "startTimeoutSeconds",
        "allowInsecureHttp",
        "useEnvironmentProxy",
    }
)


class ServerSettingInvalid(ValueError):
    """One entry that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class McpServer:
    """One configured server: `command` (stdio) or `url` (streamable HTTP), never both.

    `network`: whether a stdio server's sandbox lets it use the network. `pass_environment`:
    names it gets beside the core ones. `read_only_tools`: the tools the person marked as only
    reading, whose calls are not asked about (the server's own annotations are never read).
    `timeout_seconds`: how long a listing or a call may take; `start_timeout_seconds`: how
    long the start and the session's opening may take. `allow_insecure_http`: the person's
    yes to a plain `http://` URL on another machine; `use_environment_proxy`: whether the
    environment's proxy is used to reach the URL."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    network: bool = False
    pass_environment: tuple[str, ...] = ()
    read_only_tools: tuple[str, ...] = ()
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    start_timeout_seconds: float = DEFAULT_START_SECONDS
    allow_insecure_http: bool = False
    use_environment_proxy: bool = False

    @property
    def transport(self) -> str:
        return "http" if self.url is not None else "stdio"

    def identity(self) -> dict[str, Any]:
        """What a receipt and a pin name the server by: its name and how it is reached."""
        reached: dict[str, Any] = (
            {"url": self.url} if self.url is not None else {"command": list(self.command)}
        )
        return {"name": self.name, "transport": self.transport, **reached}

    @property
    def identity_sha256(self) -> str:
        return hashlib.sha256(canonical_json(self.identity()).encode("utf-8")).hexdigest()


def parse_servers(value: object) -> tuple[McpServer, ...]:
    """The servers of a setting value: a JSON array of entries, or its text (a terminal flag).
    Raises ServerSettingInvalid naming the first bad entry."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ServerSettingInvalid("must be a JSON array of server objects") from None
    if not isinstance(value, (list, tuple)) or len(value) > MAX_SERVERS:
        raise ServerSettingInvalid(f"must be an array of at most {MAX_SERVERS} server objects")
    servers = tuple(_server(index, entry) for index, entry in enumerate(value))
    names = [server.name for server in servers]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ServerSettingInvalid(f"names a server twice: {', '.join(repeated)}")
    return servers


def _server(index: int, entry: object) -> McpServer:
    where = f"[{index}]"
    if not isinstance(entry, dict):
        raise ServerSettingInvalid(f"{where} must be an object")
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        raise ServerSettingInvalid(f"{where} has unknown keys: {', '.join(unknown)}")
    name = entry.get("name")
    if not isinstance(name, str) or not SERVER_NAME.fullmatch(name):
        raise ServerSettingInvalid(f"{where} name must be 1-64 letters, digits, - or _")
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise ServerSettingInvalid(f"{where} must have exactly one of command and url")
    if command is not None and not is_argv(
        command, max_items=MAX_ARGV_ITEMS, max_item_chars=MAX_ARGV_ITEM_CHARS
    ):
        raise ServerSettingInvalid(f"{where} command must be a non-empty argv array")
    if url is not None and (
        not isinstance(url, str) or not url.startswith(("https://", "http://")) or len(url) > 4096
    ):
        raise ServerSettingInvalid(f"{where} url must be an http:// or https:// URL")
    network, insecure, proxy = (
        _flag(entry, key, where) for key in ("network", "allowInsecureHttp", "useEnvironmentProxy")
    )
    if url is not None and insecure_http(url) and not insecure:
        raise ServerSettingInvalid(
            f"{where} url {url!r} would carry the session (the calls' arguments and results) "
            'unencrypted to another machine; use https://, or add "allowInsecureHttp": true'
        )
    passed = _names(entry.get("passEnvironment", []), f"{where} passEnvironment", VARIABLE_NAME)
    read_only = _names(entry.get("readOnlyTools", []), f"{where} readOnlyTools", TOOL_NAME)
    timeout = _seconds(entry, "timeoutSeconds", DEFAULT_TIMEOUT_SECONDS, where)
    start_timeout = _seconds(entry, "startTimeoutSeconds", DEFAULT_START_SECONDS, where)
    return McpServer(
        name=name,
        command=tuple(command) if command is not None else (),
        url=url,
        network=network,
        pass_environment=passed,
        read_only_tools=read_only,
        timeout_seconds=timeout,
        start_timeout_seconds=start_timeout,
        allow_insecure_http=insecure,
        use_environment_proxy=proxy,
    )


def _flag(entry: dict[str, Any], key: str, where: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise ServerSettingInvalid(f"{where} {key} must be true or false")
    return value


def _seconds(entry: dict[str, Any], key: str, default: float, where: str) -> float:
    value = entry.get(key, default)
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not math.isfinite(value)
        or not 0 < value <= MAX_TIMEOUT_SECONDS
    ):
        raise ServerSettingInvalid(
            f"{where} {key} must be above 0 and at most {MAX_TIMEOUT_SECONDS:g}"
        )
    return float(value)


def _names(value: object, where: str, pattern: re.Pattern[str]) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or len(value) > MAX_LISTED:
        raise ServerSettingInvalid(f"{where} must be an array of names")
    if not all(isinstance(item, str) and pattern.fullmatch(item) for item in value):
        raise ServerSettingInvalid(f"{where} must be an array of names")
    return tuple(value)
