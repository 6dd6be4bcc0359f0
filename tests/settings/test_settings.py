"""Settings are decided once: one type, one set of defaults, one check for CLI and daemon."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfoil.cli.main import build_parser
from counterfoil.cli.setting_flags import agent_settings
from counterfoil.models import ScriptedModel
from counterfoil.settings.table import Settings, SettingsError


def test_every_bad_key_is_named_in_one_refusal() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_mapping({"maxSteps": 0, "allowWrites": "yes", "model": "ok"})
    assert refused.value.problems == (
        "allowWrites must be true or false",
        "maxSteps must be an integer from 1 to 10000",
    )


def test_the_cli_flags_go_through_the_same_checks_and_name_the_flags(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["agent", "goal", "--root", str(tmp_path), "--max-tokens", "0", "--receipt-log", "../x"]
    )
    with pytest.raises(SettingsError) as refused:
        agent_settings(args)
    assert [problem.split()[0] for problem in refused.value.problems] == [
        "--receipt-log",
        "--max-tokens",
    ]


def test_flags_left_out_take_the_settings_defaults(tmp_path: Path) -> None:
    args = build_parser().parse_args(["agent", "goal", "--root", str(tmp_path)])
    assert agent_settings(args) == Settings()


def test_flags_given_become_settings(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        [
            "agent",
            "goal",
            "--root",
            str(tmp_path),
            "--allow-writes",
            "--no-constrain",
            "--allow-command",
            "python validate.py",
            "--max-steps",
            "3",
            "--command-timeout",
            "5",
        ]
    )
    assert agent_settings(args) == Settings(
        allow_writes=True,
        constrained_decoding=False,
        allowed_commands=(("python", "validate.py"),),
        max_steps=3,
        command_timeout_seconds=5.0,
    )


@pytest.mark.parametrize("log", ["audit/receipts.jsonl", "/var/tmp/receipts.jsonl"])
def test_one_receipt_log_rule_relative_inside_the_root_or_absolute(
    tmp_path: Path, log: str
) -> None:
    expected = Path(log) if Path(log).is_absolute() else tmp_path / log
    assert Settings.from_mapping({"receiptLog": log}).receipt_log_path(tmp_path) == expected


def test_a_receipt_log_that_climbs_out_of_the_root_is_refused() -> None:
    with pytest.raises(SettingsError, match=r"receiptLog must be a relative path inside the root"):
        Settings.from_mapping({"receiptLog": "logs/../../outside.jsonl"})


def test_defaults_are_looked_up_by_setting_key() -> None:
    assert Settings.default("maxSteps") == Settings().max_steps == 8
    assert Settings.default("model") == "qwen3-4b"


def test_context_tokens_is_checked_like_every_setting_and_named_by_its_flag(
    tmp_path: Path,
) -> None:
    assert Settings.from_mapping({"contextTokens": 32768}).context_tokens == 32768
    assert Settings().context_tokens is None
    with pytest.raises(SettingsError, match="contextTokens must be an integer from 1 to"):
        Settings.from_mapping({"contextTokens": 0})
    args = build_parser().parse_args(
        ["agent", "goal", "--root", str(tmp_path), "--context-tokens", "-1"]
    )
    with pytest.raises(SettingsError, match="--context-tokens must be an integer"):
        agent_settings(args)


class StatesAWindow(ScriptedModel):
    """A `Model` whose context window is 4096 tokens."""

    @property
    def context_tokens(self) -> int | None:
        return 4096


def test_the_context_window_is_the_setting_less_room_for_one_response() -> None:
    settings = Settings(context_tokens=32768, max_tokens=1024)
    assert settings.limits().max_context_tokens == 31744
    assert settings.limits(StatesAWindow([])).max_context_tokens == 31744  # it overrides


def test_without_the_setting_the_window_is_the_one_the_model_states() -> None:
    assert Settings(max_steps=3).limits(StatesAWindow([])).max_context_tokens == 4096
    assert Settings(max_steps=3).limits(StatesAWindow([])).max_steps == 3
    assert Settings().limits(object()).max_context_tokens is None  # the character limit


def test_a_window_too_small_to_spare_a_response_is_taken_whole() -> None:
    assert Settings(context_tokens=1500, max_tokens=1024).limits().max_context_tokens == 1500
