"""Fixtures shared by the command and tree tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from counterfoil.commands.tree import listing


@pytest.fixture(params=["C", "Python"])
def listing_loops(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test runs twice: with the walk's listing loops in C, and in Python (as where the
    package was installed without a C compiler)."""
    if request.param == "C":
        if listing.compiled is None:
            pytest.skip("the C listing was not built: this install had no C compiler")
    else:
        monkeypatch.setattr(listing, "compiled", None)
    return str(request.param)


@pytest.fixture
def listings(listing_loops: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Each folder read afresh while the test runs (with the loops `listing_loops` chose): each
    `os.scandir` call of the Python loops, each folder the C loops are asked to read."""
    calls: list[Any] = []
    real = os.scandir

    def counted(path: Any = ".") -> Any:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(os, "scandir", counted)
    if listing.compiled is not None:
        real_listings = listing.compiled.listings

        def counted_listings(jobs: list[Any], threads: int) -> Any:
            calls.extend(fd for fd, previous in jobs if previous is None)
            return real_listings(jobs, threads)

        monkeypatch.setattr(listing, "compiled", SimpleNamespace(listings=counted_listings))
    yield calls
