"""Which model-server URLs Counterfoil will send prompts to, how, and where the key comes from.

A prompt carries the files the model read, so it goes in the clear (`http://`) only to this
machine unless the person opts in; a key is read from the environment variable the person
names, and only its name is ever kept in settings. A proxy from the environment (`HTTPS_PROXY`
and the like) is used only when the person asks for it, and never for this machine: a loopback
endpoint would otherwise send prompts and the key to the proxy in the clear.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from .errors import ModelLoadError

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
SCHEMA_MODES = ("json_schema", "json_object", "structured_outputs", "none")
DEFAULT_TIMEOUT_SECONDS = 120.0


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


def is_loopback_host(host: str) -> bool:
    """True for `localhost` and loopback IP literals; other names are not resolved."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def checked_endpoint(url: str, *, allow_insecure_http: bool = False) -> str:
    """The base URL without a trailing slash, or a `ModelLoadError` saying what to change."""
    if not isinstance(url, str) or not url.strip():
        raise ModelLoadError("the endpoint must be a URL such as http://127.0.0.1:8080/v1")
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelLoadError(
            f"endpoint {url!r} is not an http(s) URL; use e.g. http://127.0.0.1:8080/v1"
        )
    if parts.username or parts.password:
        raise ModelLoadError(
            "the endpoint must not carry credentials; put the key in an environment variable "
            "and name it with --api-key-env"
        )
    if parts.query or parts.fragment:
        raise ModelLoadError(f"endpoint {url!r} must not have a query or fragment")
    if parts.scheme == "http" and not is_loopback_host(parts.hostname) and not allow_insecure_http:
        raise ModelLoadError(
            f"endpoint {url!r} sends prompts (which contain your files) unencrypted to "
            f"another machine; use https://, or opt in with --allow-insecure-http"
        )
    return url


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
    """The proxy to reach `url` through: None unless the person asked for the environment's
    proxy, and always None for a loopback endpoint or one `NO_PROXY` exempts.

    The proxy for an https:// endpoint is only ever a tunnel (`CONNECT`): TLS runs end to end
    with the endpoint, so the proxy sees neither the prompt nor the key.
    """
    from urllib.request import (  # type: ignore[attr-defined]
        getproxies_environment,
        proxy_bypass_environment,
    )

    parts = urlsplit(url)
    host = parts.hostname or ""
    if not use_environment_proxy or is_loopback_host(host):
        return None
    proxies = getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or proxy_bypass_environment(host, proxies):
        return None
    if urlsplit(proxy).scheme not in ("http", "https"):
        raise ModelLoadError(
            f"the environment's proxy for {parts.scheme}:// is not an http(s) proxy; "
            "unset it or leave --use-environment-proxy off"
        )
    return proxy
