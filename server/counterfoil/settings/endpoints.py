"""Which model-server URLs Counterfoil will send prompts to: the rule the settings check and
the remote model applies. A prompt carries the files the model read, so it goes in the clear
(`http://`) only to this machine unless the person opts in; plain http and proxies follow the
rules MCP servers share (`url_rules.py`)."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..url_rules import UrlRefused, environment_proxy, insecure_http, is_loopback_host

__all__ = [
    "EndpointRefused",
    "UrlRefused",
    "checked_endpoint",
    "environment_proxy",
    "insecure_http",
    "is_loopback_host",
    "may_carry_key",
]

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
SCHEMA_MODES = ("json_schema", "json_object", "structured_outputs", "none")
DEFAULT_TIMEOUT_SECONDS = 120.0


class EndpointRefused(UrlRefused):
    """A URL Counterfoil will not send prompts to; the message says what to change."""


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
