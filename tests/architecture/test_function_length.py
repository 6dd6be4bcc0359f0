"""No function in the package runs past 80 lines unless its docstring says why it is long."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "counterfoil"
MAX_LINES = 80
REASON = "Long because"


def long_functions(source: str) -> list[tuple[str, int, bool]]:
    """Each function over `MAX_LINES` lines in `source`: its name, its length, and whether
    its docstring gives the reason."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            length = node.end_lineno - node.lineno + 1
            if length > MAX_LINES:
                found.append((node.name, length, REASON in (ast.get_docstring(node) or "")))
    return found


def test_every_function_over_80_lines_says_why_in_its_docstring() -> None:
    unexplained = [
        f"{path.relative_to(PACKAGE)}:{name} ({length} lines)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, length, explained in long_functions(path.read_text(encoding="utf-8"))
        if not explained
    ]

    assert unexplained == [], f"split these or say '{REASON} …' in their docstrings"


def test_a_long_function_without_a_reason_is_found_and_one_with_a_reason_is_not() -> None:
    body = "".join(f"    x{line} = {line}\n" for line in range(MAX_LINES))
    unexplained = f"def long():\n{body}"
    explained = f'def long():\n    """{REASON} it is a table."""\n{body}'

    assert long_functions(unexplained) == [("long", MAX_LINES + 1, False)]
    assert long_functions(explained) == [("long", MAX_LINES + 2, True)]
    assert long_functions("def short():\n    return 1\n") == []
