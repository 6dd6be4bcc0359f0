"""A trusted folder's `.vscode/settings.json` narrows the person's settings and
never widens them: each class of the settings table's folder rule, end to end."""

from __future__ import annotations

import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from .conftest import StartDaemon, edit_app_model, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(folder))  # read by the daemon
    return folder


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that records every request it is sent."""
    seen: list[str] = []

    class Recording(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(f"GET {self.path} {self.headers.get('Authorization')}")
            self.send_error(404)

        def do_POST(self) -> None:
            seen.append(f"POST {self.path} {self.headers.get('Authorization')}")
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Recording)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    server.shutdown()
    server.server_close()


def layered(person: dict[str, Any], folder: dict[str, Any]) -> dict[str, Any]:
    return {"layers": {"user": person, "workspace": {}, "folder": folder}}


def outcomes(told: dict[str, Any]) -> dict[str, str]:
    return {value["key"]: value["outcome"] for value in told["values"]}


async def test_the_folders_endpoint_and_key_variable_are_ignored_and_never_reached(
    start_daemon: StartDaemon, tmp_path: Path, config: Path, listener: tuple[str, list[str]]
) -> None:
    url, seen = listener
    person = {"model": edit_app_model(tmp_path)}
    folder = {"endpoint": url, "apiKeyEnv": "HOME", "useEnvironmentProxy": True}
    daemon = await start_daemon(layered(person, folder))

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert result["completed"] is True
    assert seen == []
    told = await daemon.request("counterfoil/folderSettings", {})
    assert outcomes(told) == {
        "endpoint": "ignored",
        "apiKeyEnv": "ignored",
        "useEnvironmentProxy": "ignored",
    }
    assert {value["source"] for value in told["values"]} == {"folder"}


async def test_a_folder_narrows_but_cannot_loosen(
    start_daemon: StartDaemon, tmp_path: Path, config: Path
) -> None:
    person = {"model": edit_app_model(tmp_path), "commandSandbox": "review", "maxSteps": 8}
    folder = {"commandSandbox": "off", "maxSteps": 2, "allowNetwork": True}
    daemon = await start_daemon(layered(person, folder))

    await daemon.until(lambda: daemon.told("counterfoil/folderSettingsChanged"))

    told = daemon.told("counterfoil/folderSettingsChanged")[-1]
    assert outcomes(told) == {
        "commandSandbox": "ignored",
        "maxSteps": "narrowed",
        "allowNetwork": "ignored",
    }


async def test_a_folders_grants_wait_for_the_persons_yes_then_apply_and_are_receipted(
    start_daemon: StartDaemon, tmp_path: Path, config: Path, demo_project: Path
) -> None:
    folder = {"allowWrites": True, "allowedCommands": [["make", "deploy"]]}
    # The final check off: it would ask the model to run `make deploy`, which is not this test's.
    person = {"model": edit_app_model(tmp_path), "checkFinalAnswer": False}
    daemon = await start_daemon(layered(person, folder))

    waiting = await daemon.request("counterfoil/status", {})
    asked = await daemon.request("counterfoil/folderSettings", {})
    confirmed = await daemon.request(
        "counterfoil/confirmFolderGrants",
        {"grants": {value["key"]: value["value"] for value in asked["values"]}, "origin": "person"},
    )
    granted = await daemon.request("counterfoil/status", {})
    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert (waiting["allowWrites"], waiting["allowedCommands"]) == (False, [])
    assert outcomes(asked) == {"allowWrites": "waiting", "allowedCommands": "waiting"}
    assert outcomes(confirmed) == {"allowWrites": "granted", "allowedCommands": "granted"}
    assert (granted["allowWrites"], granted["allowedCommands"]) == (True, [["make", "deploy"]])
    assert result["completed"] is True
    assert daemon.receipts[-1]["approval"]["grant"] == "confirmed-folder"
    assert (config / "folder-grants.json").is_file()
    assert not (demo_project / ".vscode").exists()


async def test_a_changed_request_asks_again_after_a_restart(
    start_daemon: StartDaemon, tmp_path: Path, config: Path
) -> None:
    model = edit_app_model(tmp_path)
    first = await start_daemon(layered({"model": model}, {"allowedCommands": [["make", "test"]]}))
    await first.request(
        "counterfoil/confirmFolderGrants",
        {"grants": {"allowedCommands": [["make", "test"]]}, "origin": "person"},
    )
    await first.stop()

    again = await start_daemon(
        layered({"model": model}, {"allowedCommands": [["make", "test"], ["make", "deploy"]]})
    )

    told = await again.request("counterfoil/folderSettings", {})
    assert outcomes(told) == {"allowedCommands": "waiting"}


async def test_only_a_grant_can_be_confirmed(
    start_daemon: StartDaemon, tmp_path: Path, config: Path
) -> None:
    daemon = await start_daemon(layered({"model": edit_app_model(tmp_path)}, {}))

    with pytest.raises(JsonRpcInvalidParams, match="endpoint is not a grant"):
        await daemon.request(
            "counterfoil/confirmFolderGrants",
            {"grants": {"endpoint": "http://127.0.0.1:9/v1"}, "origin": "person"},
        )
    assert not (config / "folder-grants.json").exists()


async def test_counterfoil_records_its_own_values_for_the_demo_copy_it_is_about_to_open(
    start_daemon: StartDaemon, tmp_path: Path, config: Path
) -> None:
    """The demo command writes the copy's settings and opens it in a new window, whose daemon
    then finds them recorded as Counterfoil's own; this window's settings stay as they were."""
    daemon = await start_daemon(layered({"model": edit_app_model(tmp_path)}, {}))
    copy = tmp_path / "home" / "counterfoil-demo"
    copy.mkdir(parents=True)
    script = tmp_path / "storage" / "fix-app.jsonl"  # outside the copy, as the real one is
    written = {"model": f"scripted:{script}", "allowWrites": True}

    here = await daemon.request(
        "counterfoil/confirmFolderGrants",
        {"grants": written, "origin": "walkthrough", "folder": str(copy)},
    )
    there = await start_daemon(layered({}, written), root=copy)
    told = await there.request("counterfoil/folderSettings", {})

    assert here["values"] == []
    assert outcomes(told) == {"model": "granted", "allowWrites": "granted"}
    with pytest.raises(JsonRpcInvalidParams, match="only as Counterfoil's own"):
        await daemon.request(
            "counterfoil/confirmFolderGrants",
            {"grants": {"allowWrites": True}, "origin": "person", "folder": str(copy)},
        )
    with pytest.raises(JsonRpcInvalidParams, match="an absolute folder path"):
        await daemon.request(
            "counterfoil/confirmFolderGrants",
            {"grants": {"allowWrites": True}, "origin": "walkthrough", "folder": "demo"},
        )


async def test_a_model_folder_that_appears_after_the_settings_still_waits_for_the_persons_yes(
    start_daemon: StartDaemon, tmp_path: Path, config: Path
) -> None:
    person = {"model": edit_app_model(tmp_path, final="the person's model")}
    daemon = await start_daemon(layered(person, {"model": "models/coder"}))
    before = await daemon.request("counterfoil/folderSettings", {})  # read while it is absent
    (daemon.root / "models" / "coder").mkdir(parents=True)
    (daemon.root / "models" / "coder" / "config.json").write_text("{}")

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert (result["completed"], result["final"]) == (True, "the person's model")
    assert outcomes(before) == {"model": "waiting"}
    told = await daemon.request("counterfoil/folderSettings", {})
    assert outcomes(told) == {"model": "waiting"}


async def test_a_run_decides_the_folders_model_again_by_what_is_on_disk_when_it_starts(
    start_daemon: StartDaemon, tmp_path: Path, config: Path, demo_project: Path
) -> None:
    person = {"model": edit_app_model(tmp_path, final="the person's model")}
    folder = {"model": "scripted:replies/fix.jsonl"}
    (demo_project / "replies").mkdir()
    script(demo_project / "replies" / "fix.jsonl", {"final": "the folder's model"})
    (elsewhere := tmp_path / "elsewhere").mkdir()
    script(elsewhere / "fix.jsonl", {"final": "a model outside the folder"})
    daemon = await start_daemon(layered(person, folder))
    granted = await daemon.request(
        "counterfoil/confirmFolderGrants", {"grants": folder, "origin": "person"}
    )
    shutil.rmtree(demo_project / "replies")
    (demo_project / "replies").symlink_to(elsewhere)

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert outcomes(granted) == {"model": "granted"}
    assert (result["completed"], result["final"]) == (True, "the person's model")
    told = await daemon.request("counterfoil/folderSettings", {})
    assert outcomes(told) == {"model": "ignored"}
