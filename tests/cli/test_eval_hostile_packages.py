"""A package made to break its reader gets one sentence and exit 2, before any model loads; a
sparse file in a package's workspace is staged sparse."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

from counterfoil.cli.main import main
from counterfoil.evals.package import load_package, stage_workspace

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evals"
SOLVE = f"scripted:{FIXTURES / 'scripts' / 'solve'}"


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "package"
    shutil.copytree(FIXTURES / "localized-constant", package)
    return package


def _checks_with_expected(package: Path, expected_json: str) -> None:
    check = '{"type": "python_constant", "name": "a", "path": "answer.py", "constant": "ANSWER"'
    (package / "held_out_tests" / "checks.json").write_text(
        f'{{"schema_version": 1, "checks": [{check}, "expected": {expected_json}}}]}}'
    )


def _eval(package: Path) -> tuple[int, str]:
    stdout = io.StringIO()
    status = main(["eval", str(package), "--model", SOLVE, "--yes"], stdout=stdout)
    return status, stdout.getvalue()


def test_checks_nested_3000_lists_deep_are_refused_in_one_sentence(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _checks_with_expected(package, "[" * 3000 + "]" * 3000)

    status, output = _eval(package)

    assert status == 2
    assert output == f"error: {package}: checks.json is nested more than 64 deep\n"


def test_checks_nested_past_the_limit_within_the_parsers_depth_are_refused(
    tmp_path: Path,
) -> None:
    package = _package(tmp_path)
    _checks_with_expected(package, "[" * 500 + "]" * 500)

    status, output = _eval(package)

    assert status == 2
    assert output == f"error: {package}: checks.json is nested more than 64 deep\n"


def test_an_integer_of_5000_digits_is_refused_in_one_sentence(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _checks_with_expected(package, "7" * 5000)

    status, output = _eval(package)

    assert status == 2
    assert output == (
        f"error: {package}: checks.json holds an integer of 5000 digits (at most 4300)\n"
    )


def test_a_workspace_1000_folders_deep_is_refused_in_one_sentence(tmp_path: Path) -> None:
    package = _package(tmp_path)
    chain = [os.open(package / "workspace", os.O_RDONLY)]
    for _ in range(1000):  # one at a time: os.makedirs recurses once per folder
        os.mkdir("d", dir_fd=chain[-1])
        chain.append(os.open("d", os.O_RDONLY, dir_fd=chain[-1]))
    try:
        status, output = _eval(package)
    finally:  # removed from the bottom up, as shutil.rmtree (recursive) cannot
        os.close(chain.pop())
        while chain:
            os.rmdir("d", dir_fd=chain[-1])
            os.close(chain.pop())

    assert status == 2
    assert output == f"error: {package}: workspace holds folders more than 100 deep\n"


def test_a_sparse_file_in_the_workspace_is_staged_sparse(tmp_path: Path) -> None:
    package = _package(tmp_path)
    image = package / "workspace" / "disk.img"
    with image.open("wb") as file:
        file.truncate(128 * 1024 * 1024)
        file.seek(64 * 1024 * 1024)
        file.write(b"middle")
    if image.stat().st_blocks * 512 > 1024 * 1024:
        raise AssertionError("this file system keeps no holes: the test cannot tell")

    stage_workspace(load_package(package), tmp_path / "stage")
    staged = tmp_path / "stage" / "disk.img"

    assert staged.stat().st_size == 128 * 1024 * 1024
    assert staged.stat().st_blocks * 512 <= 1024 * 1024
    with staged.open("rb") as file:
        file.seek(64 * 1024 * 1024)
        assert file.read(6) == b"middle"
