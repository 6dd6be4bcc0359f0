"""The daemon's features (`lsp/runs/`, `lsp/approvals/`, …) are layered as the package's folders
are: each imports the shared base at the top of `lsp/` and the features it builds on, none
imports the server, the session or the request table that put them together, and no two
features import each other, so a feature can be read, and tested, without the daemon around it.
"""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from tests.support.import_units import imported_units

LSP = Path(__file__).resolve().parents[2] / "server" / "counterfoil" / "lsp"
# What makes the daemon out of its features: a feature that imported one of these would need the
# whole daemon to load.
COMPOSITION = {"__init__.py", "server.py", "session.py", "handlers.py", "request_rules.py"}


def feature_imports() -> dict[str, set[str]]:
    """Each feature folder of `lsp/` and the parts of `lsp/` its modules import."""
    imports: dict[str, set[str]] = {}
    for path in sorted(LSP.glob("*/*.py")):
        imports.setdefault(f"{path.parent.name}/", set()).update(
            imported_units(LSP, path, ("counterfoil", "lsp"))
        )
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
