"""run_command's environment: the core names a program needs (PATH, HOME, the locale, …) and the
names the person adds, in every sandbox mode; nothing else, whatever its name."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction
from counterfoil.commands.runner import run_bounded
from counterfoil.gate.policy import ToolPolicy
from counterfoil.gate.workspace import Workspace
from counterfoil.settings.table import Settings

PRINT_NAMES = "import os\nprint(' '.join(sorted(os.environ)))"
SECRETS = {
    "OPENAI_API_KEY": "sk-test",
    "GITHUB_TOKEN": "ghp-test",
    "db_password": "hunter2",
    "DATABASE_URL": "postgres://app:hunter2@db/app",
    "MYSQL_PWD": "hunter3",
    "GPG_PASSPHRASE": "correct horse",
    "NPM_CONFIG__AUTH": "bnBtOnRva2Vu",
    "SENTRY_DSN": "https://key@sentry.example/1",
}
MODES = [
    "off",
    pytest.param(
        "confine",
        marks=pytest.mark.skipif(
            not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
            reason="confine on Linux needs bubblewrap",
        ),
    ),
    pytest.param(
        "review",
        marks=pytest.mark.skipif(
            not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
            reason="review on Linux needs bubblewrap",
        ),
    ),
]


@pytest.fixture
def secret_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COUNTERFOIL_PLAIN_SETTING", "visible")
    monkeypatch.setenv("LC_TIME", "C")
    monkeypatch.setenv("TZ", "UTC")


@pytest.mark.usefixtures("secret_environment")
def test_only_the_core_names_are_passed_to_commands(tmp_path: Path) -> None:
    result = run_bounded([sys.executable, "-c", PRINT_NAMES], tmp_path, 30.0)

    names = set(result.output.split())
    assert names.isdisjoint(SECRETS) and "COUNTERFOIL_PLAIN_SETTING" not in names
    assert {"PATH", "HOME", "LC_TIME", "TZ"} <= names


def workspace(root: Path, mode: str, pass_environment: tuple[str, ...] = ()) -> Workspace:
    (root / ".counterfoil").mkdir()
    argv = (sys.executable, "-c", PRINT_NAMES)
    policy = ToolPolicy(
        root,
        allowed_commands=(argv,),
        command_sandbox=mode,
        pass_environment=pass_environment,
    )
    store = ReceiptStore(root / ".counterfoil/receipts.jsonl", signer=None)
    return make_workspace(policy, store=store, answer=True)


def names_seen(space: Workspace) -> set[str]:
    argv = [sys.executable, "-c", PRINT_NAMES]
    observation = space.execute(ToolAction("run_command", {"argv": argv}))
    assert observation.startswith("status: 0"), observation
    return set(observation.splitlines()[2].split())


@pytest.mark.usefixtures("secret_environment")
@pytest.mark.parametrize("mode", MODES)
def test_secrets_whatever_their_names_never_reach_a_command(tmp_path: Path, mode: str) -> None:
    names = names_seen(workspace(tmp_path, mode))

    assert names.isdisjoint(SECRETS) and "PATH" in names


@pytest.mark.usefixtures("secret_environment")
@pytest.mark.parametrize("mode", MODES)
def test_a_name_the_person_adds_reaches_a_command(tmp_path: Path, mode: str) -> None:
    names = names_seen(workspace(tmp_path, mode, ("DATABASE_URL",)))

    assert "DATABASE_URL" in names and "MYSQL_PWD" not in names


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
    workspace = make_workspace(settings.policy(tmp_path), confirm_tool=lambda _action: True)

    observation = workspace.run_command(list(argv))

    assert "the-key" not in observation and "absent" in observation
