"""The daemon's features (`lsp/runs/`, `lsp/approvals/`, …) are layered as the package's folders
are: each imports the shared base at the top of `lsp/` and the features it builds on, none
imports the server, the session or the request table that put them together, and no two
features import each other, so a feature can be read, and tested, without the daemon around it.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

LSP = Path(__file__).resolve().parents[2] / "server" / "counterfoil" / "lsp"
# What makes the daemon out of its features: a feature that imported one of these would need the
# whole daemon to load.
COMPOSITION = {"__init__.py", "server.py", "session.py", "handlers.py", "request_rules.py"}


def lsp_unit(parts: list[str]) -> str:
    """The part of `lsp/` a module path inside it belongs to: a feature folder (`runs/`) or a
    module of the base (`channel.py`); the folder's own `__init__.py` for `from . import main`."""
    if parts and (LSP / parts[0] / "__init__.py").is_file():
        return f"{parts[0]}/"
    if parts and (LSP / f"{parts[0]}.py").is_file():
        return f"{parts[0]}.py"
    return "__init__.py"


def lsp_imports(path: Path) -> set[str]:
    """The other parts of `lsp/` that `path` imports, anywhere in the file, relative or absolute."""
    parts = list(path.relative_to(LSP).with_suffix("").parts)
    own = lsp_unit(parts) if parts != ["__init__"] else "__init__.py"
    package = ["counterfoil", "lsp", *parts[:-1]]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules: list[list[str]] = []
        if isinstance(node, ast.Import):
            modules = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = [*base, *(node.module.split(".") if node.module else [])]
            modules = [[*module, alias.name] for alias in node.names]
        for module in modules:
            if module[:2] == ["counterfoil", "lsp"]:
                unit = lsp_unit(module[2:])
                if unit != own:
                    found.add(unit)
    return found


def feature_imports() -> dict[str, set[str]]:
    """Each feature folder of `lsp/` and the parts of `lsp/` its modules import."""
    imports: dict[str, set[str]] = {}
    for path in sorted(LSP.glob("*/*.py")):
        imports.setdefault(f"{path.parent.name}/", set()).update(lsp_imports(path))
    return imports


def test_no_feature_imports_the_server_the_session_or_the_table_that_put_them_together() -> None:
    imports = feature_imports()
    composing = sorted(
        f"{feature} imports {part}"
        for feature, parts in imports.items()
        for part in parts & COMPOSITION
    )

    assert imports and composing == []


def test_the_features_import_one_another_without_a_circle() -> None:
    between = {
        feature: {part for part in parts if part.endswith("/")}
        for feature, parts in feature_imports().items()
    }
    try:
        order = list(TopologicalSorter(between).static_order())
    except CycleError as error:
        raise AssertionError(f"the daemon's features import each other: {error.args[1]}") from None

    assert any(between.values()) and set(order) == set(between)
