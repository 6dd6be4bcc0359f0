"""How a stdio MCP server is started: under the command sandbox (bubblewrap on Linux,
sandbox-exec on macOS, built by the same `sandbox_for`, with the same filter against Unix
sockets when the network is off), always, whatever `commandSandbox` says, since a server runs
for the whole run and no one approves what it does between calls. It reads the system and the
project (read-only: it changes files only through the gate's own tools), writes only its private
temporary folder, cannot read the person's home or Counterfoil's configuration, has the network
only when its entry says so, and gets the core environment names plus those its entry passes.

Its code comes from where the person said, whatever folder is open: the command's program is
resolved before the start against the person's PATH less every folder of the root (a relative
path, which names another program in each folder, is refused); the server starts in an empty
folder of its own (its sandbox's fresh `/tmp`), so `python -m` finds no package of the root on
`sys.path` and `npx` no `node_modules` of it; and every search path it gets (`PATH`,
`PYTHONPATH`, `NODE_PATH`, …) holds nothing of the root. Its program, interpreter and script
are shown to it read-only wherever they lie (a venv, the home folder, /tmp), and what was
started (path and SHA-256) is part of what a pin approves."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..commands.environment import command_environment
from ..commands.tree.reach import FRESH, hidden_folders
from ..commands.tree.sandbox import CONFINE, sandbox_for
from ..errors import AgentError
from ..receipts.counterfoil_folders import counterfoil_folders
from .servers import McpServer

SEARCH_PATHS = frozenset(
    {
        "PATH",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONUSERBASE",
        "NODE_PATH",
        "PERL5LIB",
        "PERLLIB",
        "RUBYLIB",
        "GEM_PATH",
        "GEM_HOME",
        "CLASSPATH",
        "GOPATH",
        "LD_LIBRARY_PATH",
        "DYLD_LIBRARY_PATH",
    }
)
SANDBOX_WORKDIR = Path("/tmp")  # bubblewrap's: a fresh, empty tmpfs of the server's own


@dataclass(frozen=True)
class Launch:
    """The argv (sandbox prefix and the server's command), environment and folder a stdio
    server starts with, what its receipts say about the sandbox, the program it runs
    (`executable`: its path and SHA-256, which a pin covers), what it may read beyond the
    system and the project (`shown`), and the private folder to remove after (sandbox-exec)."""

    argv: tuple[str, ...]
    environment: dict[str, str]
    cwd: str
    sandbox: dict[str, Any]
    executable: dict[str, str]
    shown: tuple[str, ...] = ()
    temporary: Path | None = None


def stdio_launch(
    server: McpServer,
    root: Path,
    *,
    hidden: tuple[Path, ...] = (),
    withheld: tuple[str, ...] = (),
    environment: Mapping[str, str] | None = None,
) -> Launch:
    """The confined start of `server`; AgentError (one sentence) when its program cannot be
    found outside the root or no sandbox can be had."""
    names = outside_root(
        command_environment(
            os.environ if environment is None else environment, server.pass_environment, withheld
        ),
        root,
    )
    program = resolved_program(server, names.get("PATH", ""))
    command = (str(program), *server.command[1:])
    shown = shown_for(program, server.command[1:], root, network=server.network)
    temporary = None
    if sys.platform == "darwin":  # no fresh /tmp there: a private folder to start in
        temporary = Path(os.path.realpath(tempfile.mkdtemp(prefix="counterfoil-mcp-")))
    workdir = temporary or SANDBOX_WORKDIR
    try:
        sandbox = sandbox_for(
            CONFINE,
            root,
            network=server.network,
            hidden=hidden,
            temporary=temporary,
            read_only_root=True,
            shown=shown,
            workdir=workdir,
        )
    except BaseException:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
        raise
    names["PWD"] = str(workdir)
    return Launch(
        argv=sandbox.argv(command),
        environment={**names, **dict(sandbox.environment)},
        cwd=str(temporary or "/"),
        sandbox=sandbox.record().as_record(),
        executable={"path": str(program), "sha256": file_sha256(program)},
        shown=tuple(str(path) for path in shown),
        temporary=temporary,
    )


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _in_root(entry: str, root: Path) -> bool:
    real_root = Path(os.path.realpath(root))
    return _under(Path(os.path.abspath(entry)), root.absolute()) or _under(
        Path(os.path.realpath(entry)), real_root
    )


def outside_root(environment: dict[str, str], root: Path) -> dict[str, str]:
    """`environment` with every search path (`PATH`, `PYTHONPATH`, `NODE_PATH`, any name
    ending in PATH) cut to its absolute folders outside the root: a relative entry names a
    folder of wherever the program runs."""
    kept = dict(environment)
    for name, value in environment.items():
        if name not in SEARCH_PATHS and not name.endswith("PATH"):
            continue
        entries = [
            entry
            for entry in value.split(os.pathsep)
            if os.path.isabs(entry) and not _in_root(entry, root)
        ]
        if entries or name == "PATH":
            kept[name] = os.pathsep.join(entries)
        else:
            del kept[name]
    return kept


def resolved_program(server: McpServer, search: str) -> Path:
    """The program the server's command names: an absolute path as it is, a bare name found
    on `search` (PATH less the root's folders); a relative path is refused."""
    first = server.command[0]
    if os.sep in first or (os.altsep is not None and os.altsep in first):
        if not os.path.isabs(first):
            raise AgentError(
                f"its command {first!r} is a relative path, which names another program "
                "in each folder; give its absolute path or a name on PATH"
            )
        found = first
    else:
        which = shutil.which(first, path=search)
        if which is None:
            raise AgentError(f"its command {first!r} is not on PATH outside the project")
        found = which
    program = Path(found)
    if not program.is_file() or not os.access(program, os.X_OK):
        raise AgentError(f"its command {found} is not an executable file")
    return program


def file_sha256(path: Path) -> str:
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def shown_for(
    program: Path, arguments: Iterable[str], root: Path, *, network: bool
) -> tuple[Path, ...]:
    """What the server needs to see wherever it lies: its program's prefix (the folder above
    its `bin`: a venv, a toolchain) or the program alone, a venv's base interpreter, and the
    folder of each script its arguments name by absolute path (the script alone when that
    folder is a top one: the home folder, /tmp). Never Counterfoil's own folders, nor a
    folder that holds them."""
    home = os.environ.get("HOME")
    tops = {Path("/"), *FRESH, *hidden_folders(root, network=network)}
    if home:
        tops.add(Path(os.path.realpath(home)))
    places: list[Path] = []

    for item in _spellings(program):
        prefix = item.parent.parent if item.parent.name == "bin" else None
        if prefix is not None and prefix not in tops:
            places.append(prefix)
            base = _venv_base(prefix)
            if base is not None and base not in tops:
                places.append(base)
        else:
            places.append(item)
    for argument in arguments:
        if os.path.isabs(argument) and os.path.isfile(argument):
            places.extend(
                item.parent if item.parent not in tops else item
                for item in _spellings(Path(argument))
            )
    own = counterfoil_folders()
    return tuple(
        place
        for place in dict.fromkeys(places)
        if not any(_under(place, folder) or _under(folder, place) for folder in own)
        and not _under(place, Path(os.path.realpath(root)))
    )


def _spellings(path: Path) -> tuple[Path, ...]:
    """The path as named and as it really is (a venv's `python` links elsewhere)."""
    return tuple(dict.fromkeys((Path(os.path.abspath(path)), Path(os.path.realpath(path)))))


def _venv_base(prefix: Path) -> Path | None:
    """The installation a venv's interpreter comes from (`home` in its pyvenv.cfg, the folder
    above that `bin`), or None when `prefix` is no venv."""
    try:
        lines = (prefix / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(os.path.realpath(value.strip()))
            return home.parent if home.name == "bin" else home
    return None
