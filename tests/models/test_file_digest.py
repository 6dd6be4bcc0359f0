"""A cached model-file digest is reused only while the file's stat, change time included, is
as it was: a same-size rewrite with its modification time put back is hashed again."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from counterfoil.models import file_digest
from counterfoil.models.file_digest import file_sha256


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(file_digest, "_memory", {})


def rewrite_keeping_mtime(path: Path, data: bytes) -> None:
    before = path.stat()
    time.sleep(0.05)  # past the kernel's coarse clock, so the change time moves
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    assert after.st_ctime_ns != before.st_ctime_ns


def test_a_same_size_rewrite_with_its_mtime_put_back_is_hashed_again(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"weights one")
    file_sha256(model)

    rewrite_keeping_mtime(model, b"weights two")

    assert file_sha256(model) == hashlib.sha256(b"weights two").hexdigest()


def test_the_digest_file_is_not_trusted_for_a_rewrite_with_its_mtime_put_back(
    tmp_path: Path,
) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"weights one")
    file_sha256(model)
    rewrite_keeping_mtime(model, b"weights two")
    file_digest._memory.clear()  # a new process: only the digest file remains

    assert file_sha256(model) == hashlib.sha256(b"weights two").hexdigest()
