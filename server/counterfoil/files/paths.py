"""Which model-given paths the gate accepts, judged from their text alone.

A path must be relative, stay in the root, fit the file system's name limit, and name no
secret, no editor setting that chooses what runs, and no temporary file of an interrupted
write. The workspace then walks the disk (no symlinks, no hard links, not the receipt log).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from fnmatch import translate
from functools import lru_cache
from pathlib import PurePosixPath

from ..errors import AgentError, DetailedRefusal
from ..step_facts import NOT_ACCESSIBLE, KeptFromModel

MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255

# The course's minimum: these names, anywhere in a path, case-insensitively.
PROTECTED_NAMES = frozenset({".aws", ".env", ".git", ".ssh", "credentials", "id_ed25519", "id_rsa"})
# What Counterfoil adds: credential files and the editor settings that choose what runs
# (`.vscode/settings.json` can set `counterfoil.serverCommand`, `tasks.json` can run a task
# when the folder opens, a `.code-workspace` file carries settings too). A pattern with `/`
# matches consecutive parts anywhere in a path.
PROTECTED_PATTERNS = (
    ".env*",
    "*.key",
    "*.pem",
    "*.p12",
    "*.pfx",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    "id_ecdsa",
    "id_dsa",
    ".docker/config.json",
    ".kube/config",
    "credentials.json",
    ".cargo/credentials.toml",
    "gh/hosts.yml",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    "*.code-workspace",
)

# The model's virtual folder of artifact ranges (see evidence.py), by its first component
# however spelt: a real folder of that name is never read, listed, searched or written.
RESERVED_FOLDER = ".tool-artifacts"

TEMPORARY_PREFIX = ".cf-"
TEMPORARY_SUFFIX = ".tmp"
# Ours, and the longer `.<name>.counterfoil-<hex>.tmp` that earlier versions left behind.
_TEMPORARY_NAME = re.compile(
    r"\.cf-[0-9a-f]{12}\.tmp|\..+\.counterfoil-[0-9a-f]{12}\.tmp", re.DOTALL
)


def temporary_name() -> str:
    """A sibling name for a write in progress: short enough to sit beside any legal name."""
    return f"{TEMPORARY_PREFIX}{secrets.token_hex(6)}{TEMPORARY_SUFFIX}"


def is_temporary_name(name: str) -> bool:
    return _TEMPORARY_NAME.fullmatch(name) is not None


@lru_cache(maxsize=64)
def _compiled(
    patterns: tuple[str, ...],
) -> tuple[re.Pattern[str] | None, tuple[tuple[re.Pattern[str], ...], ...]]:
    """The one-part patterns as one casefolded expression (a name is checked once, not once per
    pattern: search checks every name it walks), and each longer one as one per part."""
    single: list[str] = []
    compiled = []
    for pattern in patterns:
        parts = [part for part in PurePosixPath(pattern.casefold()).parts if part not in ("/", ".")]
        if len(parts) == 1:
            single.append(f"(?:{translate(parts[0])})")
        elif parts:
            compiled.append(tuple(re.compile(translate(part)) for part in parts))
    return (re.compile("|".join(single)) if single else None), tuple(compiled)


def _matches(parts: Sequence[str], patterns: tuple[str, ...]) -> bool:
    folded = [part.casefold() for part in parts]
    single, longer = _compiled(patterns)
    if single is not None and any(single.fullmatch(name) for name in folded):
        return True
    for pattern in longer:
        width = len(pattern)
        for start in range(len(folded) - width + 1):
            window = folded[start : start + width]
            if all(rule.fullmatch(name) for rule, name in zip(pattern, window, strict=True)):
                return True
    return False


def is_protected_name(name: str) -> bool:
    """A name the model never sees, wherever it appears in a path."""
    return name.casefold() in PROTECTED_NAMES or _matches((name,), PROTECTED_PATTERNS)


def is_protected_path(parts: Sequence[str], extra_patterns: tuple[str, ...] = ()) -> bool:
    """Whether any part, or run of parts, is protected or a temporary file of ours."""
    return (
        any(part.casefold() in PROTECTED_NAMES or is_temporary_name(part) for part in parts)
        or _matches(parts, PROTECTED_PATTERNS)
        or _matches(parts, extra_patterns)
    )


def protection_rule(raw: object, extra_patterns: tuple[str, ...] = ()) -> str | None:
    """For the person, never the model: which rule keeps `raw` from the model, e.g. "the
    built-in pattern .env*" (None when no rule does). The model is told only that the path is
    not accessible, the same as for a missing file, so it learns nothing about what exists."""
    if not isinstance(raw, str):
        return None
    parts = tuple(part for part in PurePosixPath(raw).parts if part not in ("/", "."))
    for part in parts:
        if part.casefold() in PROTECTED_NAMES:
            return f"the built-in name {part.casefold()}"
        if is_temporary_name(part):
            return "a temporary file of an interrupted write"
    for pattern in PROTECTED_PATTERNS:
        if _matches(parts, (pattern,)):
            return f"the built-in pattern {pattern}"
    for pattern in extra_patterns:
        if _matches(parts, (pattern,)):
            return f"your protected pattern {pattern}"
    return None


@lru_cache(maxsize=64)
def protected_walk_matcher(extra_patterns: tuple[str, ...] = ()) -> Callable[[Sequence[str]], bool]:
    """`is_protected_path` for a walk that has already checked each parent folder: only the
    runs of parts that end at the last part are tried, the one-part patterns as one regular
    expression, so a snapshot of 100,000 files stays a walk."""
    single, multi = _compiled(PROTECTED_PATTERNS + extra_patterns)
    one = single or re.compile(r"(?!)")
    ends = re.compile("|".join(f"(?:{pattern[-1].pattern})" for pattern in multi) or r"(?!)")

    def protected(parts: Sequence[str]) -> bool:
        name = parts[-1].casefold()
        if name in PROTECTED_NAMES or one.fullmatch(name) or is_temporary_name(parts[-1]):
            return True
        if not ends.fullmatch(name):
            return False
        for pattern in multi:
            width = len(pattern)
            if len(parts) >= width:
                window = [part.casefold() for part in parts[-width:]]
                if all(rule.fullmatch(part) for rule, part in zip(pattern, window, strict=True)):
                    return True
        return False

    return protected


def relative_parts(raw: object, extra_patterns: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The normalised parts of a model-given path, or the first rule it breaks."""
    if not isinstance(raw, str) or not raw.strip():
        raise AgentError("path must be a non-empty string")
    if "\0" in raw:
        raise AgentError("path must not contain NUL bytes")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise AgentError("path must be valid Unicode text") from None
    if len(raw) > MAX_PATH_CHARS:
        raise AgentError("path is too long")
    pure = PurePosixPath(raw)
    if pure.is_absolute() or ".." in pure.parts:
        raise AgentError("path must be relative and stay in the workspace")
    parts = tuple(part for part in pure.parts if part != ".")
    if parts and parts[0].casefold() == RESERVED_FOLDER:  # only read_file's artifact ranges
        raise DetailedRefusal(NOT_ACCESSIBLE, KeptFromModel("/".join(parts)))
    if is_protected_path(parts, extra_patterns):
        raise DetailedRefusal(NOT_ACCESSIBLE, KeptFromModel("/".join(parts)))
    if any(len(part.encode("utf-8")) > MAX_NAME_BYTES for part in parts):
        raise AgentError("path is too long")
    return parts
