"""`counterfoil keys init` says in one sentence why it cannot make a key, and never writes
through a symlink."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfoil.cli.main import main
from counterfoil.receipts.signing import KEY_FILE, PUBLIC_KEY_FILE


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    folder.mkdir()
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(folder))
    return folder


def test_keys_init_refuses_a_dangling_symlink_at_the_key_path_with_a_sentence(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (config / KEY_FILE).symlink_to(tmp_path / "nowhere.pem")

    assert main(["keys", "init"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("error: a symlink is already at ") and "Traceback" not in out
    assert not (tmp_path / "nowhere.pem").exists()


def test_keys_init_never_writes_the_public_key_through_a_symlink(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (config / PUBLIC_KEY_FILE).symlink_to(tmp_path / "elsewhere.pub")

    assert main(["keys", "init"]) == 1
    assert not (tmp_path / "elsewhere.pub").exists() and not (config / KEY_FILE).exists()
