"""Shared fixtures: real files in a temporary copy of the demo project."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
FIXTURES = REPOSITORY / "fixtures"


@pytest.fixture
def demo_project(tmp_path: Path) -> Path:
    """A fresh copy of fixtures/demo-project; tests never touch the fixture itself."""
    target = tmp_path / "demo-project"
    shutil.copytree(
        FIXTURES / "demo-project",
        target,
        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"),
    )
    return target
