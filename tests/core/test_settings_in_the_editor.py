"""Every setting the core knows is one the editor contributes and sends, so none is lost."""

from __future__ import annotations

import json
import re
from dataclasses import fields

from tests.conftest import REPOSITORY

from counterfoil.settings import Settings

EXTENSION = REPOSITORY / "extension"


def setting_keys() -> set[str]:
    return {item.metadata["key"] for item in fields(Settings)}


def test_every_setting_is_contributed_by_the_extension() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    contributed = set(manifest["contributes"]["configuration"]["properties"])
    missing = {f"counterfoil.{key}" for key in setting_keys()} - contributed
    assert not missing


def test_every_setting_is_sent_to_the_daemon_by_the_extension() -> None:
    source = (EXTENSION / "src" / "settings.ts").read_text(encoding="utf-8")
    listed = re.search(r"DAEMON_SETTING_KEYS = \[(.*?)\] as const", source, re.DOTALL)
    assert listed is not None
    sent = set(re.findall(r'"(\w+)"', listed.group(1)))
    assert setting_keys() == sent
