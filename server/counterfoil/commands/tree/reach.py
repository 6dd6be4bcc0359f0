"""What a confined command may reach beyond the root, and what of the root it may not change.

Hidden (an empty folder in its place): `$HOME` and the config folder that holds the receipt
signing key; with the network off also the folders that hold the host's Unix sockets (`/run`,
`$XDG_RUNTIME_DIR`, `SSH_AUTH_SOCK`'s folder), since a socket file is reachable through a
read-only mount. Shown again, read-only: the toolchains inside a hidden folder that the gate's
PATH or Python lives in (`~/.pyenv`, `~/.cargo`, `~/.local/bin`), so the commands still start.
Read-only in the root: Counterfoil's log folder (all of it), `.git`'s config, hooks and info,
and the editor's settings folders, each a mount point that cannot be renamed away; `.git`
itself is bound over itself for the same reason, writable. Hidden in the root as well
(`hidden_in_root`): Counterfoil's own folders where the root holds them (a root at the home
folder): the config folder and the cache, and any other hidden folder inside the root (the
receipt log's).
"""

from __future__ import annotations

import os
import site
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...receipts.counterfoil_folders import counterfoil_folders
from ...receipts.signing import config_dir

GIT_READ_ONLY = ("config", "hooks", "info")
EDITOR_FOLDERS = (".vscode", ".vscode-server", ".idea", ".zed", ".devcontainer", ".theia")
FRESH = (Path("/tmp"), Path("/var/tmp"))  # replaced by every sandbox anyway
SOCKET_FOLDERS = (Path("/run"), Path("/var/run"))
TWO_LEVEL = (".local", ".config")  # ~/.local/bin, not ~/.local/share


@dataclass(frozen=True)
class Reach:
    hidden: tuple[Path, ...] = ()
    shown: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    pinned: tuple[Path, ...] = ()
    hidden_in_root: tuple[Path, ...] = ()


UNRESTRICTED = Reach()  # nothing hidden, shown again, read-only or pinned


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _real_folder(text: str | None) -> Path | None:
    if not text:
        return None
    path = Path(os.path.realpath(text))
    return path if path.is_dir() and not path.is_symlink() else None


def hidden_folders(root: Path, *, network: bool) -> tuple[Path, ...]:
    """Folders replaced by an empty one: never `/`, the root or a folder inside it."""
    wanted = [os.environ.get("HOME"), str(config_dir())]
    if not network:
        wanted += [str(folder) for folder in SOCKET_FOLDERS]
        wanted.append(os.environ.get("XDG_RUNTIME_DIR"))
        agent = os.environ.get("SSH_AUTH_SOCK")
        wanted.append(os.path.dirname(agent) if agent else None)
    real_root = Path(os.path.realpath(root))
    chosen: list[Path] = []
    for folder in sorted(
        {path for path in map(_real_folder, wanted) if path is not None}, key=lambda p: len(p.parts)
    ):
        if folder == Path("/") or _under(folder, real_root):
            continue
        if any(_under(folder, done) for done in FRESH) or folder in chosen:
            continue
        chosen.append(folder)
    return tuple(chosen)


def shown_toolchains(hidden: Iterable[Path], secret: Path) -> tuple[Path, ...]:
    """The folders inside a hidden one that PATH, the gate's Python or its user site-packages
    live in, read-only;
    never the config folder or one holding it."""
    places = os.environ.get("PATH", "").split(os.pathsep) + [sys.prefix, sys.base_prefix]
    places.append(site.getusersitepackages())  # `pip install --user`: ~/.local/lib
    shown: set[Path] = set()
    for folder in hidden:
        for place in map(_real_folder, places):
            if place is None or place == folder or not _under(place, folder):
                continue
            parts = place.relative_to(folder).parts
            depth = 2 if parts[0] in TWO_LEVEL and len(parts) > 1 else 1
            top = folder.joinpath(*parts[:depth])
            if not (_under(secret, top) or _under(top, secret)):
                shown.add(top)
    return tuple(sorted(shown))


def protected_in_root(root: Path, own: Iterable[Path]) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(read-only, pinned) paths in the root: Counterfoil's records, `.git`'s config, hooks and
    info, the editor's settings folders; `.git` pinned in place."""
    real_root = os.path.realpath(root)
    read_only = [path for path in own if os.path.realpath(path) != real_root]
    git = root / ".git"
    pinned = (git,) if git.is_dir() and not git.is_symlink() else ()
    if pinned:
        read_only += [git / name for name in GIT_READ_ONLY]
    read_only += [root / name for name in EDITOR_FOLDERS]
    return tuple(path for path in read_only if os.path.lexists(path)), pinned


def inside_root(root: Path, folders: Iterable[Path]) -> tuple[Path, ...]:
    """Those of `folders` that lie inside the root (never the root itself), outermost only:
    each is hidden there by path, after the root is bound."""
    real_root = Path(os.path.realpath(root))
    inside = {
        real
        for real in (Path(os.path.realpath(folder)) for folder in folders)
        if real != real_root and _under(real, real_root) and real.is_dir()
    }
    return tuple(
        sorted(
            path
            for path in inside
            if not any(path != other and _under(path, other) for other in inside)
        )
    )


def apart_from_root(root: Path, folders: Iterable[Path]) -> tuple[Path, ...]:
    """Those of `folders` that neither are the root nor hold it (a log's folder that holds the
    root stays visible: its log, head and store are read-only instead)."""
    real_root = Path(os.path.realpath(root))
    return tuple(
        folder for folder in folders if not _under(real_root, Path(os.path.realpath(folder)))
    )


def reach_for(root: Path, own: Iterable[Path], *, network: bool) -> Reach:
    hidden = hidden_folders(root, network=network)
    real_config = Path(os.path.realpath(config_dir()))
    read_only, pinned = protected_in_root(root, own)
    in_root = inside_root(root, counterfoil_folders())
    return Reach(hidden, shown_toolchains(hidden, real_config), read_only, pinned, in_root)
