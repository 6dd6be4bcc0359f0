"""The environment a command gets: only the core names a program needs to run as the person
(PATH, HOME, the locale, the terminal, the temporary folder, who and where), plus the names the
person adds (`passEnvironment`, `--pass-env NAME`).

An allowlist, not a list of suspicious names: a secret's name says nothing (`DATABASE_URL`
holds a password, `SENTRY_DSN` a key, `MYSQL_PWD` one), and any allowlisted command (a test
runner, a build script) could print what it gets into an observation. The variable named as the
model server's key is withheld whatever its name, even when the person passes it through.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

CORE_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "USERNAME",
        "LOGNAME",
        "SHELL",
        "PWD",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "NO_COLOR",
        "TMPDIR",
        "TEMP",
        "TMP",
        "TZ",
        # Windows needs these to start most programs
        "SYSTEMROOT",
        "COMSPEC",
        "PATHEXT",
        "WINDIR",
    }
)
CORE_PREFIXES = ("LC_",)


def is_core(name: str) -> bool:
    return name in CORE_NAMES or name.startswith(CORE_PREFIXES)


def command_environment(
    environment: Mapping[str, str],
    pass_through: Iterable[str] = (),
    withheld: Iterable[str] = (),
) -> dict[str, str]:
    """The core names of `environment` and those named in `pass_through`, never a name in
    `withheld`."""
    kept = set(pass_through)
    dropped = set(withheld)
    return {
        name: value
        for name, value in environment.items()
        if name not in dropped and (name in kept or is_core(name))
    }
