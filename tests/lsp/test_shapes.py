"""The daemon's settings and JSON shapes, checked without a server."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfoil.actions import ToolAction
from counterfoil.lsp.approvals.confirm_messages import approval_of, preview
from counterfoil.lsp.settings import Settings, SettingsError, parse_settings
from counterfoil.proposals import CommandProposal


def test_missing_and_unknown_settings_take_the_safe_defaults() -> None:
    assert parse_settings(None) == Settings()
    assert parse_settings({"unknown": True, "model": None}) == Settings()
    assert Settings().allow_writes is False
    assert Settings().allowed_commands == ()


def test_settings_are_converted_to_their_python_shapes() -> None:
    settings = parse_settings(
        {
            "model": "scripted:run.jsonl",
            "allowWrites": True,
            "allowedCommands": [["python", "validate.py"]],
            "receiptLog": "audit/receipts.jsonl",
            "maxWriteBytes": 1000,
            "commandTimeoutSeconds": 5,
            "maxSteps": 3,
            "maxTokens": 64,
            "constrainedDecoding": False,
            "confirmTimeoutSeconds": 1.5,
        }
    )
    assert settings == Settings(
        model="scripted:run.jsonl",
        allow_writes=True,
        allowed_commands=(("python", "validate.py"),),
        receipt_log="audit/receipts.jsonl",
        max_write_bytes=1000,
        command_timeout_seconds=5.0,
        max_steps=3,
        max_tokens=64,
        constrained_decoding=False,
        confirm_timeout_seconds=1.5,
    )


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({"allowWrites": 1}, "allowWrites"),
        ({"allowedCommands": [["python", ""]]}, "allowedCommands[0]"),
        ({"allowedCommands": ["python validate.py"]}, "allowedCommands[0]"),
        ({"maxSteps": True}, "maxSteps"),
        ({"maxWriteBytes": -1}, "maxWriteBytes"),
        ({"commandTimeoutSeconds": float("inf")}, "commandTimeoutSeconds"),
        ({"confirmTimeoutSeconds": 0}, "confirmTimeoutSeconds"),
        ({"receiptLog": "../outside.jsonl"}, "receiptLog"),
        ({"model": ""}, "model"),
    ],
)
def test_invalid_settings_are_refused_naming_the_key(raw: dict[str, object], named: str) -> None:
    with pytest.raises(SettingsError, match=named.replace("[", r"\[").replace("]", r"\]")):
        parse_settings(raw)


def test_settings_must_be_an_object() -> None:
    with pytest.raises(SettingsError):
        parse_settings(["allowWrites"])


def test_only_approved_true_approves() -> None:
    assert approval_of({"approved": True}).approved
    for answer in ({"approved": "true"}, {"approved": 1}, {}, None, True, [True]):
        assert not approval_of(answer).approved


def test_command_preview_shows_the_exact_argv(tmp_path: Path) -> None:
    proposal = CommandProposal(
        tool_call_id="call-1",
        action=ToolAction("run_command", {"argv": ["python", "validate.py"]}),
        argv=("python", "validate.py"),
        cwd=str(tmp_path),
        timeout_seconds=30.0,
    )
    assert preview(proposal, tmp_path) == {
        "kind": "command",
        "argv": ["python", "validate.py"],
        "cwd": str(tmp_path),
        "timeoutSeconds": 30.0,
    }


def test_search_files_setting_defaults_on_and_reaches_the_policy(tmp_path: Path) -> None:
    assert parse_settings(None).policy(tmp_path).allow_search is True
    assert parse_settings({"searchFiles": False}).policy(tmp_path).allow_search is False
    with pytest.raises(SettingsError, match="searchFiles"):
        parse_settings({"searchFiles": "yes"})
