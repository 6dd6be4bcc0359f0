"""The daemon's `protectedPatterns` setting reaches the policy, and bad values are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfoil.lsp.settings import Settings, SettingsError, parse_settings


def test_protected_patterns_reach_the_policy(tmp_path: Path) -> None:
    settings = parse_settings({"protectedPatterns": ["*.yaml", "deploy/prod.*"]})
    assert settings.protected_patterns == ("*.yaml", "deploy/prod.*")
    assert settings.policy(tmp_path).protected_patterns == ("*.yaml", "deploy/prod.*")
    assert Settings().protected_patterns == ()


@pytest.mark.parametrize("value", ["*.yaml", [""], ["a", 3], [["*.yaml"]]])
def test_bad_protected_patterns_are_named(value: object) -> None:
    with pytest.raises(SettingsError, match="protectedPatterns"):
        parse_settings({"protectedPatterns": value})
