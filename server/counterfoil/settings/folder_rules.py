"""What a folder may do with each setting: the rule every row of the settings table declares.

A folder's settings (`.vscode/settings.json`, a `.code-workspace` file) come with the code the
person opened, so they may make the person's own choices stricter, never looser. Four rules:

- `narrow` (`Lower`, `OffOnly`, `Ranked`, `Subset`, `More`): a stricter value applies, a
  looser one is ignored;
- `PERSONS_ALONE`: the folder's value is ignored (where prompts and keys go, what starts);
- `Grant`: the folder asks for more (edits, commands, a model it names); the request
  applies only once the person has confirmed it on this machine (see `folder_grants.py`);
- `FOLDER_MAY`: how a run is shown or decoded, which widens nothing; the folder's value applies.

Each rule's `decide(person, folder, root)` says what a folder's value does, as a `Decision`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Outcome = Literal["applies", "narrowed", "ignored", "asks"]


@dataclass(frozen=True)
class Decision:
    """What a folder's value does: the value the run uses when it `applies`/is `narrowed`,
    the value asked for when it `asks`; an `ignored` value keeps the person's."""

    outcome: Outcome
    value: Any


class FolderRule:
    """One rule; `name` is what the docs' table and the person see."""

    name = ""

    def decide(self, person: Any, folder: Any, root: Path | None) -> Decision:
        raise NotImplementedError


class Narrow(FolderRule):
    """Stricter applies, looser is ignored; `narrower` is the value the run uses, or None."""

    name = "narrow only"

    def decide(self, person: Any, folder: Any, root: Path | None) -> Decision:
        narrowed = self.narrower(person, folder)
        if narrowed is None:
            return Decision("ignored", person)
        return Decision("narrowed", narrowed)

    def narrower(self, person: Any, folder: Any) -> Any:
        raise NotImplementedError


class Lower(Narrow):
    """A limit: lower is stricter; None (no limit) is the loosest."""

    name = "narrow only: lower"

    def narrower(self, person: Any, folder: Any) -> Any:
        if person is None or folder <= person:
            return folder
        return None


class OffOnly(Narrow):
    """A switch whose `True` allows more: a folder may turn it off."""

    name = "narrow only: off"

    def narrower(self, person: Any, folder: Any) -> Any:
        return False if folder is False else None


@dataclass(frozen=True)
class Ranked(Narrow):
    """A choice from loosest to strictest (`off` < `confine` < `review`)."""

    order: tuple[str, ...]

    @property
    def name(self) -> str:  # type: ignore[override]
        return "narrow only: " + " < ".join(self.order)

    def narrower(self, person: Any, folder: Any) -> Any:
        return folder if self.order.index(folder) >= self.order.index(person) else None


class Subset(Narrow):
    """Names the person passes: a folder may pass fewer of them."""

    name = "narrow only: a subset"

    def narrower(self, person: Any, folder: Any) -> Any:
        return folder if set(folder) <= set(person) else None


class More(Narrow):
    """Names the person protects: a folder may add more, never remove one."""

    name = "narrow only: more"

    def narrower(self, person: Any, folder: Any) -> Any:
        return tuple(dict.fromkeys((*person, *folder)))


class PersonsAlone(FolderRule):
    name = "the person's alone"

    def decide(self, person: Any, folder: Any, root: Path | None) -> Decision:
        return Decision("ignored", person)


class FolderMay(FolderRule):
    name = "the folder's value applies"

    def decide(self, person: Any, folder: Any, root: Path | None) -> Decision:
        return Decision("applies", folder)


class Grant(FolderRule):
    """A permission: a folder may grant less at once; more only after the person's yes. The
    asked value is the person's and the folder's together (their union, or `True`)."""

    name = "a grant the folder asks for: applies after your yes"

    def decide(self, person: Any, folder: Any, root: Path | None) -> Decision:
        if isinstance(folder, bool):
            return Decision("asks", True) if folder and not person else Decision("narrowed", folder)
        extra = tuple(item for item in folder if item not in person)
        if not extra:
            return Decision("narrowed", folder)
        return Decision("asks", tuple(dict.fromkeys((*person, *folder))))


def inside(path_text: str, root: Path | None) -> bool:
    """True when the path (relative paths are taken from the root) resolves inside the root."""
    if root is None:
        return False
    real_root = Path(root).resolve()
    path = Path(path_text).expanduser()
    resolved = (path if path.is_absolute() else real_root / path).resolve()
    return resolved == real_root or real_root in resolved.parents


class ReceiptLogRule(FolderRule):
    """Inside the root a folder may choose the log's place; outside, only the person."""

    name = "the folder's value applies inside the root; outside, the person's alone"

    def decide(self, person: Any, folder: Any, root: Path | None) -> Decision:
        if inside(folder, root):
            return Decision("applies", folder)
        return Decision("ignored", person)


class ModelRule(FolderRule):
    """A model the folder names is a grant, whatever it names: a model file or folder inside
    the folder (or recorded responses there) is loaded, and a crafted file is an attack on the
    loader; a name is a download (a hub repository, Python files included) fetched before the
    run. Which of the two a value is depends on the disk, and the disk changes (a checkout, a
    pull, an approved command makes `models/coder`), so the person's yes is asked either way
    and a run decides again, when it loads the model, by what is on disk then. A path outside
    the folder, or a server's address, is the person's alone."""

    name = (
        "a grant: a model inside the folder, or a name to download; outside it, the person's alone"
    )

    def decide(self, person: Any, folder: Any, root: Path | None) -> Decision:
        if "://" in folder:  # a model server's address: where prompts go is the person's
            return Decision("ignored", person)
        path = folder.removeprefix("scripted:")
        looks_like_path = (
            path != folder
            or path.startswith((".", "/", "~"))
            or "\\" in path
            or path.lower().endswith(".gguf")
            or (root is not None and (root / path).exists())
        )
        if looks_like_path and not inside(path, root):
            return Decision("ignored", person)
        return Decision("asks", folder)


# The editor's own settings (what starts the daemon): not the daemon's, taken from the person's
# settings alone; a folder's value is listed as ignored, so none goes without a word.
EDITOR_KEYS = ("serverCommand", "pythonPath")
EDITOR_OWN = "the person's alone (the editor's own: what starts the daemon)"

LOWER, OFF_ONLY, SUBSET, MORE = Lower(), OffOnly(), Subset(), More()
PERSONS_ALONE, FOLDER_MAY, GRANT = PersonsAlone(), FolderMay(), Grant()
RECEIPT_LOG, MODEL = ReceiptLogRule(), ModelRule()
