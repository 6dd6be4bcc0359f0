"""Which units of a package a module imports, read from its source: what the architecture
tests hold the package's layers, and the daemon's features, to."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT_MODULE = "__init__.py"  # `from counterfoil import name`: the package root's lazy table


def unit_of(package: Path, parts: list[str]) -> str:
    """The unit a module path inside `package` belongs to: its top folder (`gate/`), its
    top-level module (`loop.py`), or the package root for a name the root defines."""
    if not parts:
        return ROOT_MODULE
    if (package / parts[0] / "__init__.py").is_file():
        return f"{parts[0]}/"
    if (package / f"{parts[0]}.py").is_file():
        return f"{parts[0]}.py"
    return ROOT_MODULE


def own_unit(package: Path, path: Path) -> str:
    parts = list(path.relative_to(package).with_suffix("").parts)
    return unit_of(package, parts) if parts != ["__init__"] else ROOT_MODULE


def imported_units(package: Path, path: Path, dotted: tuple[str, ...]) -> dict[str, int]:
    """Each other unit of `package` (imported as `dotted`, e.g. `counterfoil.lsp`) that `path`
    imports, anywhere in the file, relative or absolute, with the first line that does."""
    name = list(dotted)
    parts = list(path.relative_to(package).with_suffix("").parts)
    own = own_unit(package, path)
    module_package = [*name, *parts[:-1]]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[list[str]] = []
        if isinstance(node, ast.Import):
            targets = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = module_package[: len(module_package) - node.level + 1] if node.level else []
            module = [*base, *(node.module.split(".") if node.module else [])]
            if module == name:  # `from counterfoil import gate` or `import __version__`
                targets = [[*name, alias.name] for alias in node.names]
            else:
                targets = [module]
        for target in targets:
            if target[: len(name)] == name:
                unit = unit_of(package, target[len(name) :])
                if unit != own:
                    found.setdefault(unit, node.lineno)
    return found
