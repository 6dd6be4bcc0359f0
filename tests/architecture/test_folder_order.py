"""The package's folders form layers: docs/architecture.md's folder-order table says, bottom-up,
which folder (or top-level module) may import which, and every import in the package keeps
to it — function-level and type-checking imports included. A unit may import only units in
rows above its own, so the order has no cycle and a new back edge fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.support.import_units import imported_units, own_unit

REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGE = REPOSITORY / "server" / "counterfoil"
ARCHITECTURE = REPOSITORY / "docs" / "architecture.md"


def import_edges(package: Path) -> dict[tuple[str, str], str]:
    """Every import from one unit into another: `(importer, imported)` → where it is."""
    edges: dict[tuple[str, str], str] = {}
    for path in sorted(package.rglob("*.py")):
        own = own_unit(package, path)
        for unit, line in imported_units(package, path, (package.name,)).items():
            edges.setdefault((own, unit), f"{path.relative_to(package).as_posix()}:{line}")
    return edges


def package_units(package: Path) -> set[str]:
    folders = {f"{path.name}/" for path in package.iterdir() if (path / "__init__.py").is_file()}
    return folders | {path.name for path in package.glob("*.py")}


def folder_order(text: str) -> list[tuple[str, set[str]]]:
    """The table under `## Folder order`, bottom row first: each unit and what it may import."""
    section = text.split("\n## Folder order\n", 1)[1].split("\n## ", 1)[0]
    rows: list[tuple[str, set[str]]] = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`"):
            rows.append((cells[0].strip("`"), set(re.findall(r"`([^`]+)`", cells[1]))))
    return rows


def order_problems(package: Path, rows: list[tuple[str, set[str]]]) -> list[str]:
    """Everything that breaks the order: a unit the table misses or invents, a row that may
    import a unit not below it, and an import the table does not allow."""
    problems: list[str] = []
    listed = [unit for unit, _ in rows]
    units = package_units(package)
    problems += [f"{unit} is not in the table" for unit in sorted(units - set(listed))]
    problems += [f"{unit} is not in the package" for unit in sorted(set(listed) - units)]
    problems += [
        f"{unit} is in the table twice" for unit in sorted(set(listed)) if listed.count(unit) > 1
    ]
    below: set[str] = set()
    allowed: dict[str, set[str]] = {}
    for unit, imports in rows:
        problems += [f"{unit} may import {name}, not below it" for name in sorted(imports - below)]
        allowed[unit] = imports
        below.add(unit)
    problems += [
        f"{importer} imports {imported} ({where})"
        for (importer, imported), where in sorted(import_edges(package).items())
        if imported not in allowed.get(importer, set())
    ]
    return problems


def test_every_import_keeps_to_the_folder_order_in_the_architecture_document() -> None:
    rows = folder_order(ARCHITECTURE.read_text(encoding="utf-8"))

    assert rows and order_problems(PACKAGE, rows) == []


def test_the_table_grants_no_import_the_package_does_not_make() -> None:
    """The table is the package's record, not a wish list: each grant is an import that exists,
    so it says what each folder knows nothing of."""
    rows = folder_order(ARCHITECTURE.read_text(encoding="utf-8"))
    edges = set(import_edges(PACKAGE))

    unused = sorted(
        f"{unit} → {name}" for unit, names in rows for name in names if (unit, name) not in edges
    )
    assert unused == []


def test_the_file_layer_imports_nothing_above_the_shared_facts() -> None:
    rows = dict(folder_order(ARCHITECTURE.read_text(encoding="utf-8")))

    assert rows["files/"] <= {"errors.py", "step_facts.py"}


# The checker itself, on a package small enough to read.


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """`counterfoil/`: `base.py` at the bottom, `low/` over it, `high/` over both."""
    package = tmp_path / "counterfoil"
    write(package / "__init__.py", "")
    write(package / "base.py", "VALUE = 1\n")
    write(package / "low" / "__init__.py", "")
    write(package / "low" / "part.py", "from ..base import VALUE\n")
    write(package / "high" / "__init__.py", "")
    write(package / "high" / "use.py", "from counterfoil.low.part import VALUE\n")
    return package


TINY_ORDER = [
    ("base.py", set()),
    ("low/", {"base.py"}),
    ("high/", {"low/"}),
    ("__init__.py", set()),
]


def test_the_checker_accepts_a_package_that_keeps_its_order(tiny: Path) -> None:
    assert order_problems(tiny, TINY_ORDER) == []


def test_the_checker_fails_on_a_back_edge_even_inside_a_function(tiny: Path) -> None:
    write(tiny / "low" / "late.py", "def load():\n    from ..high import use\n    return use\n")

    assert order_problems(tiny, TINY_ORDER) == ["low/ imports high/ (low/late.py:2)"]


def test_the_checker_fails_on_a_table_that_grants_an_import_upwards(tiny: Path) -> None:
    order = [("base.py", {"low/"}), *TINY_ORDER[1:]]

    assert order_problems(tiny, order) == ["base.py may import low/, not below it"]


def test_the_checker_counts_a_name_taken_from_the_package_root(tiny: Path) -> None:
    write(tiny / "base.py", "from counterfoil import __version__\n")

    assert order_problems(tiny, TINY_ORDER) == ["base.py imports __init__.py (base.py:1)"]


def test_the_checker_names_a_unit_the_table_misses(tiny: Path) -> None:
    write(tiny / "new" / "__init__.py", "")

    assert order_problems(tiny, TINY_ORDER) == ["new/ is not in the table"]
