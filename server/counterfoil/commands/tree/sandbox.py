"""How an approved command runs: `off` (as the user), `confine` (an OS sandbox: it writes only
under the root and a private temporary folder, reads the rest read-only, no network unless
allowed) or `review` (confined to a copy of the root whose changes a person then accepts).

Linux: bubblewrap (`bwrap`), which sits between the reaper and the command, so the reaper
still sees, and kills, every process the command starts (they are its descendants in the
outer PID namespace) and `--die-with-parent` ends the sandbox if the reaper dies. macOS:
`sandbox-exec` with a profile generated here. Where the mechanism is missing, a confined
command is refused with one sentence naming what to install; it never runs unconfined.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from ...errors import AgentError
from ...receipt_fields import SandboxRecord
from . import socket_filter
from .reach import UNRESTRICTED, Reach, inside_root, reach_for

OFF, CONFINE, REVIEW = "off", "confine", "review"
SANDBOX_MODES = (OFF, CONFINE, REVIEW)
BUBBLEWRAP, SANDBOX_EXEC, NONE = "bubblewrap", "sandbox-exec", "none"
PROBE_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class Sandbox:
    """The argv prefix that confines one command, and what its receipt says about it;
    `seccomp`, bubblewrap's filter program (`socket_filter`), read from a descriptor."""

    mode: str
    mechanism: str
    network: bool
    prefix: tuple[str, ...] = ()
    environment: tuple[tuple[str, str], ...] = ()
    seccomp: bytes | None = None

    @property
    def unix_sockets(self) -> bool:
        """Whether the command may make a Unix socket (and so reach a service's, wherever it
        listens): not with the network off under a filter or `sandbox-exec`."""
        return self.seccomp is None and not (self.mechanism == SANDBOX_EXEC and not self.network)

    def record(self) -> SandboxRecord:
        return SandboxRecord(
            mode=self.mode,
            mechanism=self.mechanism,
            network=self.network,
            unix_sockets=self.unix_sockets,
        )

    @contextmanager
    def launch(self) -> Iterator[tuple[tuple[str, ...], tuple[int, ...]]]:
        """The argv prefix to run the command under, and the descriptors it must inherit."""
        if self.seccomp is None:
            yield self.prefix, ()
            return
        with socket_filter.readable(self.seccomp) as fd:
            yield with_seccomp(self.prefix, fd), (fd,)

    def argv(self, command: tuple[str, ...]) -> tuple[str, ...]:
        """`command` under the sandbox as one argv that inherits no descriptor, for a launcher
        that cannot pass one (the MCP SDK's): with a filter, a few lines of this Python
        (isolated, importing nothing of Counterfoil) put it on descriptor 3 and exec bwrap."""
        if self.seccomp is None:
            return (*self.prefix, *command)
        prefix = with_seccomp(self.prefix, socket_filter.FILTER_FD)
        trampoline = (sys.executable, "-I", "-S", "-c", socket_filter.TRAMPOLINE)
        return (*trampoline, self.seccomp.hex(), *prefix, *command)


def with_seccomp(prefix: tuple[str, ...], fd: int) -> tuple[str, ...]:
    """bwrap's `prefix` (which ends with `--`) reading a seccomp program from `fd`."""
    return (*prefix[:-1], "--seccomp", str(fd), prefix[-1])


UNCONFINED = Sandbox(OFF, NONE, True)


def bubblewrap_argv(
    bwrap: str,
    root: Path,
    reach: Reach = UNRESTRICTED,
    *,
    source: Path | None = None,
    network: bool,
    read_only_root: bool = False,
    workdir: Path | None = None,
) -> tuple[str, ...]:
    """bwrap's arguments: the whole file system read-only, fresh /dev, /proc and /tmp, an empty
    read-only folder (or file) over each of the reach's `hidden` with nothing of it bound but
    `shown`, read-only again, the root (or `source`, a copy, mounted at the root's path) writable
    (unless `read_only_root`) except `read_only`; each of `pinned` (in the root) bound over
    itself so it cannot be moved; no capability, even as root; started in `workdir` (the
    root unless given)."""
    bind = "--ro-bind" if read_only_root else "--bind"
    hidden, shown, pinned = reach.hidden, reach.shown, reach.pinned
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if os.path.isdir("/var/tmp"):
        argv += ["--tmpfs", "/var/tmp"]
    inside_shown = [path for path in hidden if any(top in path.parents for top in shown)]
    outer = tuple(path for path in hidden if path not in inside_shown)
    emptied: list[Path] = []

    def empty(path: Path) -> None:
        if os.path.isdir(path):
            argv.extend(("--tmpfs", str(path)))
            emptied.append(path)
        elif os.path.lexists(path):
            argv.extend(("--ro-bind", "/dev/null", str(path)))

    for path in outer:
        if not _inside_any(path, tuple(other for other in outer if other != path)):
            empty(path)  # else hidden with the folder it is in
    for folder in shown:
        argv += ["--ro-bind", str(folder), str(folder)]
    for path in inside_shown:  # a socket's folder inside a toolchain stays hidden
        empty(path)
    argv += [bind, str(source or root), str(root)]
    for path in pinned:
        inside = (source or root) / path.relative_to(root)
        if inside.is_dir() and not inside.is_symlink():
            argv += [bind, str(inside), str(path)]
    for path in reach.read_only:  # nothing is bound back inside a hidden folder but the root
        if os.path.lexists(path) and (_inside_any(path, (root,)) or not _inside_any(path, hidden)):
            argv += ["--ro-bind", str(path), str(path)]
    for path in reach.hidden_in_root:  # Counterfoil's own folders, even inside the root
        empty(path)
    for path in emptied:  # read-only once every mount point inside it is made
        argv += ["--remount-ro", str(path)]
    argv += ["--unshare-pid", "--as-pid-1", "--unshare-ipc", "--die-with-parent", "--new-session"]
    argv += ["--cap-drop", "ALL"]  # as root, bwrap would otherwise keep every capability
    if not network:
        argv.append("--unshare-net")
    argv += ["--chdir", str(workdir or root), "--"]
    return tuple(argv)


def _inside_any(path: Path, folders: tuple[Path, ...]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


def _quoted(path: Path | str) -> str:
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def seatbelt_profile(
    writable: tuple[Path, ...], reach: Reach = UNRESTRICTED, *, network: bool = False
) -> str:
    """A `sandbox-exec` profile: reads allowed except the contents of the reach's `hidden` (less
    `shown` and `writable`), writes only under `writable` (less `read_only`, which the later rule
    wins for, and `pinned` themselves, which cannot be renamed or removed though what they hold
    can change) and the usual devices, no network (Unix sockets included) unless allowed."""
    hidden, shown, pinned, read_only = reach.hidden, reach.shown, reach.pinned, reach.read_only
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        "(allow file-write*",
        *(f"    (subpath {_quoted(path)})" for path in writable),
        '    (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty")',
        '    (literal "/dev/dtracehelper") (regex #"^/dev/fd/"))',
    ]
    if hidden:
        lines.append("(deny file-read-data")
        lines += [f"    (subpath {_quoted(path)})" for path in hidden]
        lines[-1] += ")"
        lines.append("(allow file-read-data")
        lines += [f"    (subpath {_quoted(path)})" for path in (*shown, *writable)]
        lines[-1] += ")"
    if pinned:
        lines.append("(deny file-write*")
        lines += [f"    (literal {_quoted(path)})" for path in pinned]
        lines[-1] += ")"
    if read_only:
        lines.append("(deny file-write*")
        lines += [f"    (subpath {_quoted(path)})" for path in read_only]
        lines[-1] += ")"
    if reach.hidden_in_root:  # after the root's allow: Counterfoil's own folders inside it
        lines.append("(deny file-read-data file-write*")
        lines += [f"    (subpath {_quoted(path)})" for path in reach.hidden_in_root]
        lines[-1] += ")"
    if not network:
        lines.append("(deny network*)")
    return "\n".join(lines) + "\n"


_PROBED: dict[str, str | None] = {}


def _probe_environment() -> dict[str, str]:
    """The probe runs as commands do, with nothing preloaded (a preloaded OpenBLAS hangs it)."""
    environment = dict(os.environ)
    environment.pop("LD_PRELOAD", None)
    return environment


def _bubblewrap_problem(bwrap: str) -> str | None:
    """Why bwrap cannot make a sandbox here (no user namespaces, say), once per process; a
    probe that only ran out of time (a busy machine) is asked again next time, never kept."""
    if bwrap in _PROBED:
        return _PROBED[bwrap]
    probe = Sandbox(
        CONFINE,
        BUBBLEWRAP,
        False,
        bubblewrap_argv(bwrap, Path("/"), network=False),
        seccomp=socket_filter.program(),
    )
    try:
        with probe.launch() as (prefix, fds):
            completed = subprocess.run(
                (*prefix, "true"),
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_SECONDS,
                check=False,
                env=_probe_environment(),
                pass_fds=fds,
            )
    except subprocess.TimeoutExpired:
        return f"its probe did not finish in {PROBE_TIMEOUT_SECONDS:.0f} s"
    except (OSError, subprocess.SubprocessError) as error:
        problem: str | None = str(error)
    else:
        output = completed.stderr.strip()
        problem = (
            None if completed.returncode == 0 else (output.splitlines()[-1] if output else "failed")
        )
    _PROBED[bwrap] = problem
    return problem


def sandbox_for(
    mode: str,
    root: Path,
    *,
    network: bool,
    source: Path | None = None,
    read_only: tuple[Path, ...] = (),
    temporary: Path | None = None,
    hidden: tuple[Path, ...] = (),
    platform: str = sys.platform,
    read_only_root: bool = False,
    shown: tuple[Path, ...] = (),
    workdir: Path | None = None,
) -> Sandbox:
    """The sandbox for one command, or one MCP server, in `mode`; AgentError (one sentence)
    when it cannot be had. Commands and servers get the same one: the same hiding, and with the
    network off the same filter against Unix sockets.

    `source`: the copy a reviewed command works on. `read_only`: Counterfoil's own records (the
    log's folder), kept read-only with what `reach.py` protects in the root and hides outside
    it. `temporary`: the private folder that `sandbox-exec` lets it write (bubblewrap gives it
    a fresh /tmp instead). `hidden`: more that the command may neither read nor write (an
    evaluation's packages and receipt log, the receipt log's folder), inside the root too.
    `read_only_root`: nothing writable but the temporary folder (an MCP server, which changes
    files only through the gate). `shown`: more to show read-only wherever it lies, even in a
    hidden folder (a server's interpreter and script). `workdir`: where it starts, the root
    unless given (bubblewrap: a path inside the sandbox)."""
    if mode == OFF:
        return UNCONFINED
    if mode not in SANDBOX_MODES:
        raise AgentError(f"unknown command sandbox mode: {mode}")
    if platform.startswith("linux"):
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise AgentError(
                f"commandSandbox {mode} needs bubblewrap, which is not installed "
                "(install it: sudo apt-get install bubblewrap); the command was not run"
            )
        problem = _bubblewrap_problem(bwrap)
        if problem is not None:
            raise AgentError(
                f"commandSandbox {mode}: bubblewrap cannot make a sandbox here ({problem}); "
                "the command was not run"
            )
        reach = _hiding(reach_for(root, read_only, network=network), hidden, root)
        reach = replace(reach, shown=tuple(dict.fromkeys((*reach.shown, *shown))))
        prefix = bubblewrap_argv(
            bwrap,
            root,
            reach,
            source=source,
            network=network,
            read_only_root=read_only_root,
            workdir=workdir,
        )
        seccomp = None if network else socket_filter.program()
        return Sandbox(mode, BUBBLEWRAP, network, prefix, (("TMPDIR", "/tmp"),), seccomp)
    if platform == "darwin":
        tool = shutil.which("sandbox-exec") or "/usr/bin/sandbox-exec"
        if not os.path.exists(tool):
            raise AgentError(
                f"commandSandbox {mode} needs macOS's sandbox-exec, which is missing; "
                "the command was not run"
            )
        places = (temporary,) if read_only_root else (source or root, temporary)
        writable = tuple(path for path in places if path is not None)
        reach = _hiding(reach_for(source or root, read_only, network=network), hidden, root)
        reach = replace(reach, shown=tuple(dict.fromkeys((*reach.shown, *shown))))
        profile = seatbelt_profile(writable, reach, network=network)
        environment = (("TMPDIR", str(temporary)),) if temporary is not None else ()
        return Sandbox(mode, SANDBOX_EXEC, network, (tool, "-p", profile, "--"), environment)
    raise AgentError(
        f"commandSandbox {mode} is not available on {platform} (it needs Linux with bubblewrap "
        "or macOS); the command was not run"
    )


def _hiding(reach: Reach, more: tuple[Path, ...], root: Path) -> Reach:
    """The reach with `more` hidden as well (an evaluation's packages, the receipt log's
    folder): those inside the root after the root is bound, the rest before."""
    in_root = inside_root(root, more)
    outer = tuple(path for path in more if Path(os.path.realpath(path)) not in in_root)
    return replace(
        reach,
        hidden=(*reach.hidden, *outer),
        hidden_in_root=tuple(dict.fromkeys((*reach.hidden_in_root, *in_root))),
    )


@contextmanager
def private_temporary(mode: str) -> Iterator[Path | None]:
    """The private temporary folder that `sandbox_for` gives a command under `sandbox-exec`,
    removed after; None where none is needed (bubblewrap gives it a fresh /tmp instead)."""
    if mode == OFF or sys.platform != "darwin":
        yield None
        return
    temporary = Path(os.path.realpath(tempfile.mkdtemp(prefix="counterfoil-tmp-")))
    try:
        yield temporary
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
