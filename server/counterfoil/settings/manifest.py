"""The editor's contributed configuration, generated from the settings table: each setting's
JSON schema, default and Markdown description as `extension/package.json` declares them under
`counterfoil.*`, and docs/settings.md's table of what a folder may do with each.
`python -m counterfoil.settings.manifest` rewrites both (then run `npm run format` in
extension/); a test fails when either disagrees with the table."""

from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from .folder_rules import EDITOR_KEYS, EDITOR_OWN, PERSONS_ALONE, FolderRule
from .table import Settings

REPOSITORY = Path(__file__).resolve().parents[3]
PACKAGE_JSON = REPOSITORY / "extension" / "package.json"
SETTINGS_DOC = REPOSITORY / "docs" / "settings.md"
TABLE_START, TABLE_END = "<!-- folder rules: generated -->\n", "<!-- end of folder rules -->\n"
PREFIX = "counterfoil."


def json_value(value: object) -> object:
    """A default as JSON holds it: tuples as arrays, whole floats as integers, a value with
    a record (the approval rules) as its record."""
    as_record = getattr(value, "as_record", None)
    if callable(as_record):
        return as_record()
    if isinstance(value, tuple):
        return [json_value(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def editor_scope(rule: FolderRule) -> str:
    """VS Code's scope for a rule: the person's alone is set in the person's own settings
    (`machine`: VS Code ignores a workspace's value too); the rest per folder (`resource`),
    where the daemon applies the rule."""
    return "machine" if rule is PERSONS_ALONE else "resource"


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
        entry["scope"] = editor_scope(meta["folder"])
        contributed[PREFIX + meta["key"]] = entry
    return contributed


def folder_rule_table() -> str:
    """docs/settings.md's table: each setting and what a folder may do with it."""
    rows = [
        "| setting | what a folder's value may do | VS Code scope |",
        "|---|---|---|",
    ]
    for item in fields(Settings):
        rule = item.metadata["folder"]
        rows.append(f"| `{item.metadata['key']}` | {rule.name} | `{editor_scope(rule)}` |")
    rows += [f"| `{key}` | {EDITOR_OWN} | `machine` |" for key in EDITOR_KEYS]
    return "\n".join(rows) + "\n"


def main() -> int:
    manifest = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    properties = manifest["contributes"]["configuration"]["properties"]
    generated = contributed_settings()
    # The order the Settings editor shows is kept; a new setting comes last.
    kept = {key: generated.get(key, value) for key, value in properties.items()}
    manifest["contributes"]["configuration"]["properties"] = {**kept, **generated, **kept}
    PACKAGE_JSON.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(PACKAGE_JSON)
    document = SETTINGS_DOC.read_text(encoding="utf-8")
    before, rest = document.split(TABLE_START, 1)
    after = rest.split(TABLE_END, 1)[1]
    SETTINGS_DOC.write_text(before + TABLE_START + folder_rule_table() + TABLE_END + after, "utf-8")
    print(SETTINGS_DOC)
    return 0


if __name__ == "__main__":
    sys.exit(main())
