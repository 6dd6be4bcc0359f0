"""Whether a file's text parses in its format, judged from its name: JSON, Python, TOML and
YAML (YAML only where PyYAML is installed), and any format the person's `parsedFiles` setting
names for other file names. The text is parsed, never run (Python with `ast`, as the grader
does). The gate asks this of a proposed write or edit before anyone is asked (a change that
breaks a file that parsed is refused), and again of a written file (the text a person approved
in place of the proposal, a change to a file that was broken already)."""

from __future__ import annotations

import ast
import importlib
import json
import re
import tomllib
import warnings
from dataclasses import replace
from fnmatch import fnmatchcase
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from ..step_facts import SameMeaning, SyntaxProblem

MAX_CHECKED_CHARS = 1024 * 1024
MAX_BEFORE_CHARS = 2000  # the most of a file's earlier text a problem repeats

# Each format's name in a setting, and as the model is told it.
FORMATS = {"json": "JSON", "python": "Python", "toml": "TOML", "yaml": "YAML"}
BUILT_IN = {".json": "json", ".py": "python", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}
_TOML_LINE = re.compile(r"\(at line (\d+),")


def file_format(path: str, parsed_files: tuple[str, ...] = ()) -> str | None:
    """The format `path` is checked as (a key of `FORMATS`), or None: the first of
    `parsed_files` (`PATTERN=FORMAT`, a pattern matched case-insensitively against the name, or
    the path when it holds `/`) that matches, else the built-in one its suffix names."""
    pure = PurePosixPath(path)
    for item in parsed_files:
        pattern, _, name = item.rpartition("=")
        subject = pure.as_posix() if "/" in pattern else pure.name
        if fnmatchcase(subject.casefold(), pattern.strip().casefold()):
            return name.strip().lower()
    return BUILT_IN.get(pure.suffix.lower())


def yaml_checked() -> bool:
    """Whether YAML can be parsed here (PyYAML is optional: without it, YAML is not checked)."""
    return _yaml() is not None


@cache
def _yaml() -> Any:
    try:
        return importlib.import_module("yaml")
    except ImportError:
        return None


def syntax_problem(
    path: str, text: str, before: str | None = None, parsed_files: tuple[str, ...] = ()
) -> SyntaxProblem | None:
    """Where `text` stops parsing as the format `path` names, or None (parses, or no format
    known here, or too long to check). `before`: the file's text before the change, kept in
    the problem when it parsed and is short."""
    kind = file_format(path, parsed_files)
    problem = _problem(path, kind, text)
    if problem is None or before is None or len(before) > MAX_BEFORE_CHARS:
        return problem
    if _problem(path, kind, before) is not None:
        return problem
    return replace(problem, before=before)


def parses(path: str, text: str, parsed_files: tuple[str, ...] = ()) -> bool:
    """`text` parses as the format `path` names (or there is none to check it by)."""
    return _problem(path, file_format(path, parsed_files), text) is None


def _problem(path: str, kind: str | None, text: str) -> SyntaxProblem | None:
    if kind is None or len(text) > MAX_CHECKED_CHARS:
        return None
    language = FORMATS.get(kind)
    if language is None:
        return None
    try:
        _meaning(kind, text)
    except json.JSONDecodeError as error:
        return SyntaxProblem(path, language, error.lineno, error.msg)
    except SyntaxError as error:
        return SyntaxProblem(path, language, error.lineno, error.msg)
    except tomllib.TOMLDecodeError as error:
        found = _TOML_LINE.search(str(error))
        return SyntaxProblem(path, language, int(found.group(1)) if found else None, str(error))
    except (ValueError, RecursionError, MemoryError):
        return None  # past what the parser takes: not the model's syntax
    except Exception as error:  # PyYAML's own error type, known only once it is imported
        yaml = _yaml()
        if yaml is None or not isinstance(error, yaml.YAMLError):
            raise
        mark = getattr(error, "problem_mark", None)
        line = None if mark is None else int(mark.line) + 1
        message = str(getattr(error, "problem", None) or error).strip()
        return SyntaxProblem(path, language, line, message)
    return None


def same_meaning(
    path: str, text: str, before: str | None, parsed_files: tuple[str, ...] = ()
) -> SameMeaning | None:
    """`text` differs from `before` but parses to the same thing in the format `path` names
    (Python compared as its syntax tree, without positions), or None."""
    if before is None or text == before or max(len(text), len(before)) > MAX_CHECKED_CHARS:
        return None
    kind = file_format(path, parsed_files)
    language = FORMATS.get(kind or "")
    if kind is None or language is None or (kind == "yaml" and _yaml() is None):
        return None
    try:
        same = _meaning(kind, text) == _meaning(kind, before)
    except Exception:  # noqa: BLE001 - one of them does not parse: syntax_problem says so
        return None
    return SameMeaning(path, language) if same else None


def _meaning(kind: str, text: str) -> object:
    """What `text` means in the format `kind`; raises the parser's error where it does not parse
    (YAML without PyYAML: nothing to compare, every text means nothing)."""
    if kind == "json":
        return json.loads(text)
    if kind == "toml":
        return tomllib.loads(text)
    if kind == "yaml":
        yaml = _yaml()
        return None if yaml is None else list(yaml.safe_load_all(text))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an invalid escape in the model's text
        return ast.dump(ast.parse(text))
