"""The rules for every URL Counterfoil talks to, the model endpoint's and an MCP server's: one
rule for plain http and one for proxies, below both so neither restates them.

A prompt carries the files the model read, and an MCP session the calls' arguments and results,
so either goes in the clear (`http://`) only to this machine unless the person opts in
(`insecure_http`). A proxy from the environment (`HTTPS_PROXY` and the like) is used only when
the person asks for it, and never for this machine (`environment_proxy`)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


class UrlRefused(ValueError):
    """A URL or proxy Counterfoil will not use; the message says what to change."""


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
    asked for the environment's, and always None for this machine or a host `NO_PROXY`
    exempts; UrlRefused for a proxy that is not http(s).

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
        raise UrlRefused(
            f"the environment's proxy for {parts.scheme}:// is not an http(s) proxy; "
            "unset it or leave --use-environment-proxy off"
        )
    return str(proxy)
