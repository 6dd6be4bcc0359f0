"""A call the person's approval rule approves is told to the editor as the rule decides it,
before the effect is done, with the rule that decided; nobody is asked."""

from __future__ import annotations

from typing import Any

import pytest

from counterfoil import protocol as messages
from counterfoil.gate.rules import parse_rules

from .conftest import Daemon, StartDaemon
from .test_messages import conforms

EDIT_RULE = {"decision": "allow", "path": "app.py"}
RULE_APPROVED = "counterfoil/ruleApproved"


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


def listen(daemon: Daemon) -> list[dict[str, Any]]:
    """Each `counterfoil/ruleApproved`, with how many receipts and step events the client had
    been sent when it came."""
    told: list[dict[str, Any]] = []

    @daemon.client.feature(RULE_APPROVED)
    def rule_approved(params: dict[str, Any]) -> None:
        seen = {"receipts": len(daemon.receipts), "events": len(daemon.events)}
        daemon.record(told, {"params": params, "seen": seen})

    return told


async def test_an_edit_a_rule_approves_is_told_before_it_is_done_and_not_asked(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon({**fix_app_settings, "approvalRules": [EDIT_RULE]})
    told = listen(daemon)

    await daemon.request("counterfoil/run", {"goal": "make double() double"})

    [note] = told
    approved = note["params"]["approved"]
    assert (approved["tool"], approved["preview"]["path"]) == ("edit_file", "app.py")
    edit_steps = [event for event in daemon.events if event["toolCallId"] == approved["toolCallId"]]
    assert note["seen"] == {"receipts": 0, "events": 1}  # after the read's step, before the edit's
    assert approved["toolCallId"] not in [confirm["toolCallId"] for confirm in daemon.confirms]
    assert len(edit_steps) == 1


async def test_the_rule_named_is_the_one_its_receipt_names(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon({**fix_app_settings, "approvalRules": [EDIT_RULE]})
    told = listen(daemon)

    await daemon.request("counterfoil/run", {"goal": "make double() double"})

    [note] = told
    params = note["params"]
    conforms(params, messages.RuleApproved, RULE_APPROVED)
    [receipt] = [
        r for r in daemon.receipts if r["tool_call_id"] == params["approved"]["toolCallId"]
    ]
    approval = receipt["approval"]
    assert (params["rule"], params["ruleIndex"], params["rulesSha256"]) == (
        approval["rule"],
        approval["rule_index"],
        approval["rules_sha256"],
    )
    assert params["rulesSha256"] == parse_rules([EDIT_RULE], "").sha256
    assert params["ruleWords"] == "allow writes to app.py"


async def test_the_step_of_a_rule_approved_effect_names_the_rule(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon({**fix_app_settings, "approvalRules": [EDIT_RULE]})

    await daemon.request("counterfoil/run", {"goal": "make double() double"})

    by_rule = {
        event["effect"]["tool"]: event["effect"].get("byRule")
        for event in daemon.events
        if event["effect"] is not None
    }
    assert by_rule == {"edit_file": parse_rules([EDIT_RULE], "").rules[0].text, "run_command": None}


async def test_a_run_without_rules_tells_no_rule_approval(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon(fix_app_settings)
    told = listen(daemon)

    await daemon.request("counterfoil/run", {"goal": "make double() double"})

    assert told == []
    assert [confirm["tool"] for confirm in daemon.confirms] == ["edit_file", "run_command"]
