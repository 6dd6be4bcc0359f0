"""Which model-server URLs Counterfoil will send prompts to: the rule the settings check and
the remote model applies. A prompt carries the files the model read, so it goes in the clear
(`http://`) only to this machine unless the person opts in."""

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
    if parts.scheme == "http" and not is_loopback_host(parts.hostname) and not allow_insecure_http:
        raise EndpointRefused(
            f"endpoint {url!r} sends prompts (which contain your files) unencrypted to "
            f"another machine; use https://, or opt in with --allow-insecure-http"
        )
    return url
