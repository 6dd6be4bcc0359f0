"""The editor's contributed configuration, generated from the settings table: each setting's
JSON schema, default and Markdown description as `extension/package.json` declares them under
`counterfoil.*`. `python -m counterfoil.settings.manifest` rewrites them there (then run
`npm run format` in extension/); a test fails when package.json disagrees with the table."""

from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from .table import Settings

PACKAGE_JSON = Path(__file__).resolve().parents[3] / "extension" / "package.json"
PREFIX = "counterfoil."


def json_value(value: object) -> object:
    """A default as JSON holds it: tuples as arrays, whole floats as integers."""
    if isinstance(value, tuple):
        return [json_value(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def contributed_settings() -> dict[str, dict[str, Any]]:
    """`counterfoil.<key>` → its contributed configuration, in the table's order."""
    contributed: dict[str, dict[str, Any]] = {}
    for item in fields(Settings):
        meta = item.metadata
        entry: dict[str, Any] = {**meta["schema"]}
        if meta["choices"] is not None:
            entry["enum"] = list(meta["choices"])
        entry["default"] = json_value(item.default)
        entry["markdownDescription"] = meta["description"]
        if meta["scope"] is not None:
            entry["scope"] = meta["scope"]
        contributed[PREFIX + meta["key"]] = entry
    return contributed


def main() -> int:
    manifest = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    properties = manifest["contributes"]["configuration"]["properties"]
    generated = contributed_settings()
    # The order the Settings editor shows is kept; a new setting comes last.
    kept = {key: generated.get(key, value) for key, value in properties.items()}
    manifest["contributes"]["configuration"]["properties"] = {**kept, **generated, **kept}
    PACKAGE_JSON.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(PACKAGE_JSON)
    return 0


if __name__ == "__main__":
    sys.exit(main())
