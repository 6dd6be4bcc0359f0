"""run_command's environment: the daemon's, minus the names that usually hold secrets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from counterfoil.commands import run_bounded
from counterfoil.policy import ToolPolicy

PRINT_NAMES = "import os\nprint(' '.join(sorted(os.environ)))"
SECRETS = {
    "OPENAI_API_KEY": "sk-test",
    "GITHUB_TOKEN": "ghp-test",
    "db_password": "hunter2",
    "My_Secret_Value": "s",
    "AWS_CREDENTIALS_FILE": "/tmp/c",
}


@pytest.fixture
def secret_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COUNTERFOIL_PLAIN_SETTING", "visible")


@pytest.mark.usefixtures("secret_environment")
def test_names_that_look_like_secrets_are_not_passed_to_commands(tmp_path: Path) -> None:
    result = run_bounded([sys.executable, "-c", PRINT_NAMES], tmp_path, 30.0)

    names = set(result.output.split())
    assert names.isdisjoint(SECRETS)
    assert {"COUNTERFOIL_PLAIN_SETTING", "PATH"} <= names


@pytest.mark.usefixtures("secret_environment")
def test_named_variables_are_passed_through_on_request(tmp_path: Path) -> None:
    script = "import os\nprint(os.environ['GITHUB_TOKEN'])"
    result = run_bounded(
        [sys.executable, "-c", script], tmp_path, 30.0, pass_environment=("GITHUB_TOKEN",)
    )

    assert result.output == "ghp-test\n"


def test_the_policy_passes_nothing_extra_by_default(tmp_path: Path) -> None:
    assert ToolPolicy(tmp_path).pass_environment == ()
    assert ToolPolicy(tmp_path, pass_environment=("A_TOKEN",)).pass_environment == ("A_TOKEN",)


@pytest.mark.parametrize("names", [["A_TOKEN"], ("",), ("A=B",), ("A\0B",), (3,)])
def test_pass_environment_must_be_a_tuple_of_names(tmp_path: Path, names: object) -> None:
    with pytest.raises(ValueError, match="pass_environment must be a tuple of variable names"):
        ToolPolicy(tmp_path, pass_environment=names)  # type: ignore[arg-type]
