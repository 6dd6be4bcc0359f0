"""The environment a command gets: the gate's own, minus the names that usually hold secrets.

An API key in the daemon's environment is not the model's to read: any allowlisted command
(a test runner, a build script) could print it into an observation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

SECRET_NAME_PARTS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL")


def looks_secret(name: str) -> bool:
    folded = name.casefold()
    return any(part.casefold() in folded for part in SECRET_NAME_PARTS)


def command_environment(
    environment: Mapping[str, str], pass_through: Iterable[str] = ()
) -> dict[str, str]:
    """`environment` without secret-looking names, except those named in `pass_through`."""
    kept = set(pass_through)
    return {
        name: value for name, value in environment.items() if name in kept or not looks_secret(name)
    }
