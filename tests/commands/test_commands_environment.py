"""run_command's environment: the daemon's, minus the names that usually hold secrets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from counterfoil.commands.runner import run_bounded
from counterfoil.policy import ToolPolicy
from counterfoil.settings import Settings
from counterfoil.workspace import Workspace

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


def test_a_withheld_name_is_not_passed_even_when_listed_to_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_AUTH", "the-key")
    result = run_bounded(
        [sys.executable, "-c", PRINT_NAMES],
        tmp_path,
        30.0,
        pass_environment=("LLM_AUTH",),
        withheld_environment=("LLM_AUTH",),
    )

    assert "LLM_AUTH" not in result.output.split()


@pytest.mark.parametrize(
    ("mapping", "withheld"),
    [
        ({"apiKeyEnv": "LLM_AUTH"}, ("LLM_AUTH",)),
        ({"apiKeyEnv": "LLM_AUTH", "passEnvironment": ["LLM_AUTH"]}, ("LLM_AUTH",)),
        ({"endpoint": "http://127.0.0.1:8080/v1"}, ("OPENAI_API_KEY",)),
        ({}, ()),
    ],
)
def test_the_model_servers_key_variable_is_withheld_from_commands_whatever_its_name(
    tmp_path: Path, mapping: dict[str, object], withheld: tuple[str, ...]
) -> None:
    assert Settings.from_mapping(mapping).policy(tmp_path).withheld_environment == withheld


def test_an_approved_command_never_sees_the_key_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_AUTH", "the-key")
    argv = (sys.executable, "-c", "import os; print(os.environ.get('LLM_AUTH', 'absent'))")
    settings = Settings.from_mapping(
        {"apiKeyEnv": "LLM_AUTH", "passEnvironment": ["LLM_AUTH"], "allowedCommands": [argv]}
    )
    workspace = Workspace(settings.policy(tmp_path), lambda _action: True)

    observation = workspace.run_command(list(argv))

    assert "the-key" not in observation and "absent" in observation
