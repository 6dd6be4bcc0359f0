"""Which model-server URLs Counterfoil will send prompts to, how, and where the key comes from.

A prompt carries the files the model read, so it goes in the clear (`http://`) only to this
machine unless the person opts in; a key is read from the environment variable the person
names, and only its name is ever kept in settings. A proxy from the environment (`HTTPS_PROXY`
and the like) is used only when the person asks for it, and never for this machine: a loopback
endpoint would otherwise send prompts and the key to the proxy in the clear.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ...settings import endpoints
from ...settings.endpoints import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_TIMEOUT_SECONDS,
    SCHEMA_MODES,
    is_loopback_host,
)
from ..errors import ModelLoadError

# The URL rule lives in the core (`counterfoil.settings.endpoints`); its names are here for the models.
__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_TIMEOUT_SECONDS",
    "SCHEMA_MODES",
    "EndpointOptions",
    "api_key_from_environment",
    "checked_endpoint",
    "is_loopback_host",
]


@dataclass(frozen=True)
class EndpointOptions:
    """Where a remote model runs and how to ask it; part of `GenerationOptions`, so of the
    daemon's cache key. Only the key's variable name is kept: the key is read when the model
    loads and never appears in a repr, a log or a cache key."""

    url: str
    api_key_env: str | None = None
    allow_insecure_http: bool = False
    schema_mode: str = "json_schema"
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    use_environment_proxy: bool = False


def checked_endpoint(url: str, *, allow_insecure_http: bool = False) -> str:
    """The base URL without a trailing slash, or a `ModelLoadError` saying what to change."""
    try:
        return endpoints.checked_endpoint(url, allow_insecure_http=allow_insecure_http)
    except endpoints.EndpointRefused as error:
        raise ModelLoadError(str(error)) from None


def api_key_from_environment(variable: str | None) -> str | None:
    """The key in `variable`, else in OPENAI_API_KEY when `variable` is not given, else None.

    Naming a variable that is unset or empty is an error: the person meant to send a key.
    """
    if variable is None or not variable.strip():
        return os.environ.get(DEFAULT_API_KEY_ENV) or None
    key = os.environ.get(variable)
    if not key:
        raise ModelLoadError(f"environment variable {variable} (named by --api-key-env) is not set")
    return key


def environment_proxy(url: str, *, use_environment_proxy: bool) -> str | None:
    """The proxy to reach `url` through (the rule MCP servers over HTTP share:
    `counterfoil.url_rules.environment_proxy`), or a `ModelLoadError`."""
    try:
        return endpoints.environment_proxy(url, use_environment_proxy=use_environment_proxy)
    except endpoints.UrlRefused as error:
        raise ModelLoadError(str(error)) from None
