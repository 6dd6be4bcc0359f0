"""docs/architecture.md is the code map: it names every folder of the package."""

from __future__ import annotations

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGE = REPOSITORY / "server" / "counterfoil"


def test_the_architecture_document_names_every_folder_of_the_package() -> None:
    text = (REPOSITORY / "docs" / "architecture.md").read_text(encoding="utf-8")
    folders = sorted(
        path.parent.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("__init__.py")
        if path.parent != PACKAGE
    )
    unnamed = [folder for folder in folders if f"`{folder}/`" not in text]

    assert folders and unnamed == []
