"""The person's settings with a folder's on top, under each row's folder rule.

The editor sends each setting's values by where they were written (VS Code's `inspect()`):
`{"layers": {"user": {...}, "workspace": {...}, "folder": {...}}}`; a flat mapping (the
terminal's flags, an older client) is the person's own. The person's values are checked one by
one (`refused.py`: a bad one keeps the person's last valid value or the default, and is
listed); each value a folder sets (the workspace's, then
the folder's own) goes through its row's rule (`folder_rules.py`): it applies, narrows, is
ignored (a bad value too, named), or asks for a grant that applies once confirmed
(`folder_grants.py`). Every folder value that differs from the person's is listed, with its
source and outcome, for the run panel and `counterfoil doctor`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .checks import Invalid
from .folder_grants import FolderGrants, GrantOrigin
from .folder_rules import EDITOR_KEYS, EDITOR_OWN, Decision, Grant, ModelRule
from .refused import RefusedSetting, checked_one_by_one
from .table import Settings, SettingsError

if TYPE_CHECKING:
    from ..gate.grants import GrantedBy

PERSON_SOURCE = "user"
FOLDER_SOURCES = ("workspace", "folder")
LAYERS_KEY = "layers"
FolderOutcome = Literal["applies", "narrowed", "ignored", "waiting", "granted"]
# Where the grant that allowed an effect came from, as a receipt's approval records it.
GrantSource = Literal["settings", "walkthrough", "confirmed-folder", "task-package"]
ORIGIN_SOURCE: dict[GrantOrigin, GrantSource] = {
    "walkthrough": "walkthrough",
    "person": "confirmed-folder",
}


@dataclass(frozen=True)
class FolderValue:
    """One value a folder set that is not the person's, and what became of it."""

    key: str
    source: str  # "workspace" or "folder"
    value: Any  # as the folder wrote it
    outcome: FolderOutcome
    rule: str
    problem: str | None = None  # why a value was refused by its check
    origin: GrantOrigin | None = None  # who confirmed a granted value

    def record(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "source": self.source,
            "value": self.value,
            "outcome": self.outcome,
            "rule": self.rule,
            "problem": self.problem,
            "origin": self.origin,
        }


@dataclass(frozen=True)
class LayeredSettings:
    """The settings a run uses, the folder values that were not simply the person's, and
    where each grant in force came from."""

    settings: Settings
    folder_values: tuple[FolderValue, ...] = ()
    grant_sources: Mapping[str, GrantSource] = field(default_factory=dict)
    command_sources: Mapping[tuple[str, ...], GrantSource] = field(default_factory=dict)
    # The person's own values as checked (the last valid ones the next change keeps), and
    # those refused.
    person: Settings | None = None
    refused: tuple[RefusedSetting, ...] = ()

    def waiting(self) -> tuple[FolderValue, ...]:
        return tuple(value for value in self.folder_values if value.outcome == "waiting")

    def command_source(self, argv: tuple[str, ...]) -> GrantSource:
        return self.command_sources.get(tuple(argv), "settings")

    def granted_by(self) -> GrantedBy:
        """The sources as the gate records them in each approval."""
        from ..gate.grants import GrantedBy

        writes = self.grant_sources.get("allowWrites", "settings")
        return GrantedBy(writes, tuple(self.command_sources.items()))


def is_layered(raw: object) -> bool:
    return isinstance(raw, Mapping) and isinstance(raw.get(LAYERS_KEY), Mapping)


def folder_layer(layers: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
    """Key → (source, value) of what the folder set: the workspace's, then the folder's own."""
    merged: dict[str, tuple[str, Any]] = {}
    for source in FOLDER_SOURCES:
        layer = layers.get(source)
        if isinstance(layer, Mapping):
            merged.update(
                (key, (source, value)) for key, value in layer.items() if value is not None
            )
    return merged


def layered_settings(
    raw: object,
    root: Path | None,
    grants: FolderGrants | None = None,
    kept: Settings | None = None,
) -> LayeredSettings:
    """The run's settings from `raw` (layered or flat) for the folder `root`; each of the
    person's values a check refuses keeps its value in `kept` (the person's settings before)
    or its default, and is listed. SettingsError only when the person's settings are no
    object."""
    if not is_layered(raw):
        alone, refused = checked_one_by_one(raw, kept)
        return LayeredSettings(alone, person=alone, refused=refused)
    assert isinstance(raw, Mapping)
    layers: Mapping[str, Any] = raw[LAYERS_KEY]
    person, refused = checked_one_by_one(layers.get(PERSON_SOURCE) or {}, kept)
    asked = folder_layer(layers)
    grants = grants or FolderGrants()
    changes: dict[str, Any] = {}
    listed: list[FolderValue] = []
    sources: dict[str, GrantSource] = {}
    command_sources: dict[tuple[str, ...], GrantSource] = {}
    for item in fields(Settings):
        meta = item.metadata
        key, rule = meta["key"], meta["folder"]
        if key not in asked:
            continue
        source, value = asked[key]
        try:
            checked = meta["check"](value)
        except Invalid as invalid:
            listed.append(FolderValue(key, source, value, "ignored", rule.name, invalid.detail))
            continue
        mine = getattr(person, item.name)
        if checked == mine:
            continue
        decision = rule.decide(mine, checked, root)
        origin = None if root is None else grants.origin(root, key, checked)
        outcome: FolderOutcome
        if decision.outcome == "asks":
            outcome = "waiting" if origin is None else "granted"
        elif origin == "walkthrough":  # Counterfoil wrote it for the person: theirs
            outcome, decision = "granted", Decision("asks", checked)
        else:
            outcome, origin = decision.outcome, None
        if outcome in ("applies", "narrowed", "granted"):
            changes[item.name] = decision.value
        if origin is not None:
            sources[key] = ORIGIN_SOURCE[origin]
            if key == "allowedCommands":
                command_sources.update(
                    (argv, ORIGIN_SOURCE[origin]) for argv in checked if argv not in mine
                )
        listed.append(FolderValue(key, source, value, outcome, rule.name, None, origin))
    for key in EDITOR_KEYS:  # sent by the editor to be listed: the daemon never uses them
        if key in asked:
            source, value = asked[key]
            listed.append(FolderValue(key, source, value, "ignored", EDITOR_OWN))
    settings = replace(person, **changes)  # every value passed its row's check
    return LayeredSettings(settings, tuple(listed), sources, command_sources, person, refused)


def grant_keys() -> frozenset[str]:
    """The settings a folder asks for as a grant: those whose rule can answer `asks`."""
    return frozenset(
        item.metadata["key"]
        for item in fields(Settings)
        if isinstance(item.metadata["folder"], (Grant, ModelRule))
    )


def confirm_grants(
    granted: Mapping[str, Any], root: Path, origin: GrantOrigin, grants: FolderGrants | None = None
) -> None:
    """Record the person's yes (or the walkthrough's write) to each `key: value` for the
    folder `root`; SettingsError naming every key that is not a grant or a value its check
    refuses, and then nothing is recorded."""
    checks = {item.metadata["key"]: item.metadata["check"] for item in fields(Settings)}
    allowed = grant_keys()
    confirmed: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in granted.items():
        if key not in allowed:
            problems.append(f"{key} is not a grant a folder asks for")
            continue
        try:
            confirmed[key] = checks[key](value)
        except Invalid as invalid:
            problems.append(f"{key} {invalid.detail}")
    if problems:
        raise SettingsError("folder grants not confirmed: " + "; ".join(problems), tuple(problems))
    store = grants or FolderGrants()
    for key, value in confirmed.items():
        store.confirm(root, key, value, origin)
