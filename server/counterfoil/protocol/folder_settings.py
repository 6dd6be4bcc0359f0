"""What a folder's settings did, and the person's yes to the grants a folder asks for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .field_checks import FieldCheck, checked
from .wire import SOMETIMES

FolderOutcomeName = Literal["applies", "narrowed", "ignored", "waiting", "granted"]
GrantOriginName = Literal["walkthrough", "person"]


def _grants(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(key, str) and key for key in value)
    )


GRANTS = FieldCheck(_grants, "an object of setting keys and the values granted", "{name}: {what}")
ORIGIN = FieldCheck(
    lambda value: value in ("walkthrough", "person"), '"walkthrough" or "person"', "{name}: {what}"
)

FOLDER = FieldCheck(
    lambda value: value is None or (isinstance(value, str) and value.startswith("/")),
    "an absolute folder path",
    "{name}: {what}",
)


@dataclass(frozen=True, kw_only=True)
class FolderSettingValue:
    """One value a folder set that is not the person's own, and what became of it."""

    key: str
    source: str  # "workspace" or "folder" (VS Code's inspect())
    value: Any  # as the folder wrote it
    outcome: FolderOutcomeName
    rule: str  # the row's folder rule, in words
    problem: str | None = field(default=None, metadata=SOMETIMES)  # a value its check refused
    origin: GrantOriginName | None = field(default=None, metadata=SOMETIMES)  # who confirmed


@dataclass(frozen=True, kw_only=True)
class RefusedSettingValue:
    """One of the person's own values its check refused: the run uses `used` instead (JSON
    text), the person's last valid value (`yours`) or the setting's default."""

    key: str
    problem: str  # the check's words after the key ("must be an integer from 1 to 10000")
    used: str
    fallback: Literal["yours", "default"]


@dataclass(frozen=True, kw_only=True)
class FolderSettingsResult:
    """`counterfoil/folderSettings` (also sent as a notification when the settings change):
    what the folder's values did, and which of the person's own values were refused."""

    root: str | None
    values: list[FolderSettingValue]
    refused: list[RefusedSettingValue]


@dataclass(frozen=True, kw_only=True)
class ConfirmFolderGrantsParams:
    """`counterfoil/confirmFolderGrants`: the person's yes to the folder's grants (`person`),
    or values Counterfoil's own walkthrough or commands wrote into the folder (`walkthrough`);
    `grants` maps each setting key to the value confirmed, as it was shown or written.
    `folder`: an absolute folder Counterfoil's own command has just written (the demo project's
    copy, before it opens in its window); only with `walkthrough`; default: the daemon's root."""

    grants: dict[str, Any] = field(metadata=checked(GRANTS))
    origin: GrantOriginName = field(metadata=checked(ORIGIN))
    folder: str | None = field(default=None, metadata=checked(FOLDER, sometimes=True))
