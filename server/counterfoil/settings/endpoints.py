"""Which URLs Counterfoil will talk to, and how: the rules the settings check, the remote model
and MCP servers over HTTP apply. A prompt carries the files the model read, and an MCP session
the calls' arguments and results, so either goes in the clear (`http://`) only to this machine
unless the person opts in (`insecure_http`); a proxy from the environment is used only when the
person asks for it, and never for this machine (`environment_proxy`)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
SCHEMA_MODES = ("json_schema", "json_object", "structured_outputs", "none")
DEFAULT_TIMEOUT_SECONDS = 120.0


class EndpointRefused(ValueError):
    """A URL Counterfoil will not send prompts to; the message says what to change."""


def is_loopback_host(host: str) -> bool:
    """True for `localhost` and loopback IP literals; other names are not resolved."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def insecure_http(url: str) -> bool:
    """The one rule for plain http: True for an `http://` URL to another machine, which only
    the person's explicit yes allows (`--allow-insecure-http`, an MCP entry's
    `allowInsecureHttp`)."""
    parts = urlsplit(url)
    return parts.scheme == "http" and not is_loopback_host(parts.hostname or "")


def environment_proxy(url: str, *, use_environment_proxy: bool) -> str | None:
    """The one rule for proxies: the proxy to reach `url` through, None unless the person
    asked for the environment's (`HTTPS_PROXY` and the like), and always None for this machine
    or a host `NO_PROXY` exempts; EndpointRefused for a proxy that is not http(s).

    The proxy for an https:// URL is only ever a tunnel (`CONNECT`): TLS runs end to end, so
    the proxy sees neither what is sent nor a key."""
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
        raise EndpointRefused(
            f"the environment's proxy for {parts.scheme}:// is not an http(s) proxy; "
            "unset it or leave --use-environment-proxy off"
        )
    return str(proxy)


def may_carry_key(url: str) -> bool:
    """A key goes only over `https://` or to this machine, even where plain `http://` to
    another machine is allowed for prompts."""
    parts = urlsplit(url)
    return parts.scheme == "https" or is_loopback_host(parts.hostname or "")


def checked_endpoint(url: str, *, allow_insecure_http: bool = False) -> str:
    """The base URL without a trailing slash, or `EndpointRefused` saying what to change."""
    if not isinstance(url, str) or not url.strip():
        raise EndpointRefused("the endpoint must be a URL such as http://127.0.0.1:8080/v1")
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointRefused(
            f"endpoint {url!r} is not an http(s) URL; use e.g. http://127.0.0.1:8080/v1"
        )
    if parts.username or parts.password:
        raise EndpointRefused(
            "the endpoint must not carry credentials; put the key in an environment variable "
            "and name it with --api-key-env"
        )
    if parts.query or parts.fragment:
        raise EndpointRefused(f"endpoint {url!r} must not have a query or fragment")
    if insecure_http(url) and not allow_insecure_http:
        raise EndpointRefused(
            f"endpoint {url!r} sends prompts (which contain your files) unencrypted to "
            f"another machine; use https://, or opt in with --allow-insecure-http"
        )
    return url
