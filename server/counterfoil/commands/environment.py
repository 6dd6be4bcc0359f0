"""The environment a command gets: the gate's own, minus the names that usually hold secrets.

An API key in the daemon's environment is not the model's to read: any allowlisted command
(a test runner, a build script) could print it into an observation. The variable named as the
model server's key is withheld whatever its name, even when the person passes it through.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

SECRET_NAME_PARTS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL")


def looks_secret(name: str) -> bool:
    folded = name.casefold()
    return any(part.casefold() in folded for part in SECRET_NAME_PARTS)


def command_environment(
    environment: Mapping[str, str],
    pass_through: Iterable[str] = (),
    withheld: Iterable[str] = (),
) -> dict[str, str]:
    """`environment` without secret-looking names, except those named in `pass_through`, and
    never with a name in `withheld`."""
    kept = set(pass_through)
    dropped = set(withheld)
    return {
        name: value
        for name, value in environment.items()
        if name not in dropped and (name in kept or not looks_secret(name))
    }
