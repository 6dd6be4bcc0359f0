"""One invalid setting is refused alone: the daemon keeps every other setting,
keeps the person's last valid value (or the default) for that one, says which setting, what was
wrong and what is used instead, and starts no run with a model the person did not choose."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import StartDaemon, edit_app_model


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


def person(values: dict[str, Any]) -> dict[str, Any]:
    return {"layers": {"user": values, "workspace": {}, "folder": {}}}


async def test_an_invalid_value_at_start_leaves_every_other_setting_as_set(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = edit_app_model(tmp_path)
    daemon = await start_daemon(
        person({"model": model, "allowWrites": True, "maxSteps": -5, "receiptLog": "audit.jsonl"})
    )

    status = await daemon.request("counterfoil/status", {})

    assert (status["model"], status["allowWrites"]) == (model, True)
    assert status["receiptLog"].endswith("audit.jsonl")


async def test_a_refused_value_at_start_is_listed_with_the_default_used_instead(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    daemon = await start_daemon(person({"model": edit_app_model(tmp_path), "maxSteps": -5}))

    told = await daemon.request("counterfoil/folderSettings", {})

    assert told["refused"] == [
        {
            "key": "maxSteps",
            "problem": "must be an integer from 1 to 10000",
            "used": "8",
            "fallback": "default",
        }
    ]


async def test_a_refused_change_keeps_the_persons_last_valid_value(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = edit_app_model(tmp_path)
    daemon = await start_daemon(person({"model": model, "maxSteps": 3}))

    await daemon.configure(person({"model": model, "maxSteps": -5, "allowWrites": True}))

    told = await daemon.request("counterfoil/folderSettings", {})
    assert [(item["key"], item["used"], item["fallback"]) for item in told["refused"]] == [
        ("maxSteps", "3", "yours")
    ]
    assert (await daemon.request("counterfoil/status", {}))["allowWrites"] is True


async def test_a_refused_value_is_said_with_the_setting_and_what_is_used(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    daemon = await start_daemon(person({"model": edit_app_model(tmp_path), "maxSteps": -5}))

    await daemon.until(lambda: daemon.client.messages, types.WINDOW_SHOW_MESSAGE)

    [shown] = daemon.client.messages
    assert shown.type == types.MessageType.Error
    assert "maxSteps must be an integer from 1 to 10000; using 8 (the default)" in shown.message


async def test_the_refusal_is_sent_to_the_editor_when_the_settings_change(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = edit_app_model(tmp_path)
    daemon = await start_daemon(person({"model": model}))

    await daemon.configure(person({"model": model, "commandSandbox": "loose"}))

    changed = daemon.told("counterfoil/folderSettingsChanged")
    assert [item["key"] for item in changed[-1]["refused"]] == ["commandSandbox"]


@pytest.mark.parametrize(
    ("key", "value"), [("endpoint", "not a url"), ("model", ""), ("engine", "vllm")]
)
async def test_no_run_starts_when_the_setting_choosing_the_model_was_refused(
    start_daemon: StartDaemon, tmp_path: Path, key: str, value: str
) -> None:
    daemon = await start_daemon(person({"model": edit_app_model(tmp_path), key: value}))

    with pytest.raises(JsonRpcException) as refused:
        await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert "no run starts with a model you did not choose" in str(refused.value)
    assert key in str(refused.value)
    assert daemon.told("counterfoil/runStarted") == []


async def test_a_run_goes_on_with_the_model_the_person_chose_before(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = edit_app_model(tmp_path)
    daemon = await start_daemon(person({"model": model, "allowWrites": True}))
    await daemon.configure(person({"model": "", "allowWrites": True}))

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert result["completed"] is True
