"""Fixtures shared by the command and tree tests."""

from __future__ import annotations

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
