"""SHA-256 digests of large files, computed once per file state.

A model's weights are hundreds of megabytes; hashing them on every load would cost seconds. A
digest is kept against the file's (size, modification time, change time, device, inode), in
memory and in `$XDG_CACHE_HOME/counterfoil/digests.json`, and recomputed whenever any of those
changes. The change time is there because anyone can put a modification time back (`touch -d`,
`os.utime`) after a same-size rewrite; the change time is set by the kernel alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

_CHUNK = 1 << 20
_lock = threading.Lock()
FileState = tuple[int, ...]  # (size, mtime_ns, ctime_ns, device, inode)
_memory: dict[str, tuple[FileState, str]] = {}


def digest_cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "counterfoil" / "digests.json"


def _file_state(status: os.stat_result) -> FileState:
    """What a cached digest is kept against: a file whose state is unchanged has its bytes."""
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_dev, status.st_ino)


def file_sha256(path: str | Path, *, use_cache: bool = True) -> str:
    """The hex SHA-256 of the file at `path` (reused while its stat is unchanged)."""
    resolved = Path(path).resolve()
    status = resolved.stat()
    state = _file_state(status)
    key = str(resolved)
    if use_cache:
        with _lock:
            known = _memory.get(key) or _stored().get(key)
        if known is not None and tuple(known[0]) == state:
            return known[1]
    digest = hashlib.sha256()
    with resolved.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    value = digest.hexdigest()
    if use_cache:
        with _lock:
            _memory[key] = (state, value)
            _store(key, state, value)
    return value


def _stored() -> dict[str, tuple[FileState, str]]:
    try:
        data = json.loads(digest_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found: dict[str, tuple[FileState, str]] = {}
    if not isinstance(data, dict):
        return found
    for key, entry in data.items():
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("stat"), list)
            and len(entry["stat"]) == 5  # an older entry, kept without the change time, is not
            and all(isinstance(value, int) for value in entry["stat"])
            and isinstance(entry.get("sha256"), str)
        ):
            found[str(key)] = (tuple(entry["stat"]), entry["sha256"])
    return found


def _store(key: str, state: FileState, value: str) -> None:
    """Add one entry to the digest file (written beside and renamed; a failure is harmless)."""
    path = digest_cache_path()
    entries = {name: {"stat": list(s), "sha256": v} for name, (s, v) in _stored().items()}
    entries[key] = {"stat": list(state), "sha256": value}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(entries), encoding="utf-8")
        partial.replace(path)
    except OSError:
        pass
