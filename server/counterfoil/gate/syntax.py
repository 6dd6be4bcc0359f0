"""Whether a file a write or an edit left still parses in its format, judged from its name:
JSON, Python and TOML. The text is parsed, never run (Python with `ast`, as the grader does),
so a model hears at once that it broke a file instead of finishing with it broken."""

from __future__ import annotations

import ast
import json
import tomllib
import warnings
from dataclasses import replace
from pathlib import PurePosixPath

from ..step_facts import SameMeaning, SyntaxProblem

MAX_CHECKED_CHARS = 1024 * 1024


MAX_BEFORE_CHARS = 2000  # the most of a file's earlier text a problem repeats


def syntax_problem(path: str, text: str, before: str | None = None) -> SyntaxProblem | None:
    """Where `text` stops parsing as the format `path` names, or None (parses, or no format
    known here, or too long to check). `before`: the file's text before the change, kept in
    the problem when it parsed and is short."""
    problem = _problem(path, text)
    if problem is None or before is None or len(before) > MAX_BEFORE_CHARS:
        return problem
    if _problem(path, before) is not None:
        return problem
    return replace(problem, before=before)


def _problem(path: str, text: str) -> SyntaxProblem | None:
    if len(text) > MAX_CHECKED_CHARS:
        return None
    suffix = PurePosixPath(path).suffix.lower()
    try:
        if suffix == ".json":
            json.loads(text)
        elif suffix == ".py":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # an invalid escape in the model's text
                ast.parse(text, path)
        elif suffix == ".toml":
            tomllib.loads(text)
    except json.JSONDecodeError as error:
        return SyntaxProblem(path, "JSON", error.lineno, error.msg)
    except SyntaxError as error:
        return SyntaxProblem(path, "Python", error.lineno, error.msg)
    except tomllib.TOMLDecodeError as error:
        return SyntaxProblem(path, "TOML", None, str(error))
    except (ValueError, RecursionError, MemoryError):
        return None  # past what the parser takes: not the model's syntax
    return None


def same_meaning(path: str, text: str, before: str | None) -> SameMeaning | None:
    """`text` differs from `before` but parses to the same thing in the format `path` names
    (Python compared as its syntax tree, without positions), or None."""
    if before is None or text == before or max(len(text), len(before)) > MAX_CHECKED_CHARS:
        return None
    suffix = PurePosixPath(path).suffix.lower()
    language = {".json": "JSON", ".py": "Python", ".toml": "TOML"}.get(suffix)
    if language is None:
        return None
    try:
        same = _meaning(suffix, text) == _meaning(suffix, before)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        return None  # one of them does not parse: not the same, and syntax_problem says so
    return SameMeaning(path, language) if same else None


def _meaning(suffix: str, text: str) -> object:
    if suffix == ".json":
        return json.loads(text)
    if suffix == ".toml":
        return tomllib.loads(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.dump(ast.parse(text))
