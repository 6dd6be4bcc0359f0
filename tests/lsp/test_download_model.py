"""`counterfoil/downloadModel` and the model fields of `counterfoil/status`, on a local hub."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from tests.support.hub_server import REPO, WEIGHTS, HubServer, serve_hub, write_model_folder

from counterfoil.lsp.model_service.model_requests import model_runtime_answer
from counterfoil.models import runtime

from .conftest import Daemon, StartDaemon

MIB = 1024 * 1024


@pytest.fixture
def daemon_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """A local hub; the daemon started in the test inherits its endpoint and a fresh cache."""
    folder = write_model_folder(tmp_path / "repo", weights_bytes=24 * MIB)
    with serve_hub({REPO: folder}) as server:
        server.piece_bytes = MIB
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield server


def record_downloads(daemon: Daemon) -> list[dict[str, Any]]:
    reports: list[dict[str, Any]] = []

    @daemon.client.feature("counterfoil/download")
    def download(params: dict[str, Any]) -> None:
        reports.append(params)
        daemon.changed.set()

    return reports


async def cancel_mid_download(
    daemon: Daemon, reports: list[dict[str, Any]], method: str, params: dict[str, Any]
) -> asyncio.Future[Any]:
    """Send `method`, cancel it once a download has brought its first chunk; return its answer."""
    pending = daemon.send(method, params, msg_id="cancelled-1")
    await daemon.until(lambda: any(report["bytes"] > MIB for report in reports))
    daemon.notify(types.CANCEL_REQUEST, types.CancelParams(id="cancelled-1"))
    return pending


async def test_download_streams_progress_and_answers_with_the_snapshot_path(
    start_daemon: StartDaemon, daemon_hub: HubServer
) -> None:
    daemon = await start_daemon({"model": REPO})
    reports = record_downloads(daemon)
    before = await daemon.request("counterfoil/status", {})

    for _ in range(200):  # the first status asked the hub for the size in the background
        sized = await daemon.request("counterfoil/status", {})
        if sized["modelDownloadBytes"] is not None:
            break
        await asyncio.sleep(0.05)
    answer = await daemon.request("counterfoil/downloadModel", {})

    assert before["modelOnDisk"] is False
    assert sized["modelDownloadBytes"] == 24 * MIB + 27  # weights, config.json, tokenizer
    assert answer["ok"] is True
    assert (Path(answer["path"]) / WEIGHTS).stat().st_size == 24 * MIB
    await daemon.until(lambda: bool(reports) and reports[-1]["state"] == "done")
    assert set(reports[-1]) == {"model", "bytes", "total", "rate", "etaSeconds", "state"}
    assert reports[-1]["bytes"] == reports[-1]["total"] > 24 * MIB
    assert any(0 < report["bytes"] < report["total"] for report in reports)
    status = await daemon.request("counterfoil/status", {})
    assert (status["modelOnDisk"], status["modelDownloadBytes"]) == (True, 0)
    await daemon.until(
        lambda: any(
            reports_of_token[0].title == "Downloading model" and reports_of_token[-1].kind == "end"
            for reports_of_token in daemon.client.progress_reports.values()
        )
    )


async def test_cancel_stops_the_download_and_the_next_request_resumes_it(
    start_daemon: StartDaemon, daemon_hub: HubServer
) -> None:
    daemon_hub.seconds_per_piece = 0.05
    daemon = await start_daemon({"model": REPO})
    reports = record_downloads(daemon)

    pending = await cancel_mid_download(daemon, reports, "counterfoil/downloadModel", {})

    with pytest.raises(JsonRpcException) as raised:
        await pending
    assert raised.value.code == -32800 and "what arrived is kept" in raised.value.message
    assert reports[-1]["state"] == "cancelled"
    [partial] = Path(daemon_hub.repos[REPO]).parent.joinpath("hf-home").rglob("*.incomplete")
    kept = partial.stat().st_size
    assert 0 < kept < 24 * MIB
    daemon_hub.seconds_per_piece = 0.0

    answer = await daemon.request("counterfoil/downloadModel", {"model": REPO})

    assert answer["ok"] is True
    assert daemon_hub.gets(WEIGHTS)[-1].range == f"bytes={kept}-"


async def test_a_wrong_name_is_one_error_with_the_way_out(
    start_daemon: StartDaemon, daemon_hub: HubServer
) -> None:
    daemon = await start_daemon({"model": "scripted:responses.jsonl"})

    with pytest.raises(JsonRpcException) as raised:
        await daemon.request("counterfoil/downloadModel", {"model": "owner/missing"})
    with pytest.raises(JsonRpcInvalidParams):
        await daemon.request("counterfoil/downloadModel", {"model": 3})

    assert raised.value.code == -32003
    assert "owner/missing was not found on " + daemon_hub.url in raised.value.message
    assert "scripted:PATH" in raised.value.message
    status = await daemon.request("counterfoil/status", {})
    assert (status["modelOnDisk"], status["modelDownloadBytes"]) == (True, 0)


async def test_a_run_downloads_a_model_not_on_disk_first_and_cancelling_it_keeps_the_bytes(
    start_daemon: StartDaemon, daemon_hub: HubServer
) -> None:
    daemon_hub.seconds_per_piece = 0.05
    daemon = await start_daemon({"model": REPO})
    reports = record_downloads(daemon)

    result = await (await cancel_mid_download(daemon, reports, "counterfoil/run", {"goal": "x"}))

    assert result["reason"] == "cancelled"
    assert reports[-1]["state"] == "cancelled"
    assert daemon.model_states == []  # loading never started
    [partial] = Path(daemon_hub.repos[REPO]).parent.joinpath("hf-home").rglob("*.incomplete")
    assert 0 < partial.stat().st_size < 24 * MIB


async def test_model_runtime_says_what_the_model_needs_in_the_daemons_python(
    start_daemon: StartDaemon,
) -> None:
    daemon = await start_daemon({"model": "scripted:responses.jsonl"})

    scripted = await daemon.request("counterfoil/modelRuntime", {})
    hub_model = await daemon.request("counterfoil/modelRuntime", {"model": "qwen3-4b"})

    assert scripted["extra"] is None and scripted["command"] is None
    assert hub_model["extra"] == "mlx" and hub_model["python"]
    if hub_model["missing"]:  # this Python lacks MLX: the command installs it into it
        assert hub_model["command"][:4] == [hub_model["python"], "-m", "pip", "install"]
    else:
        assert hub_model["command"] is None


def test_model_runtime_says_too_when_the_models_files_cannot_be_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", closed)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # the suite runs offline; ask the hub
    # As in a bare Python: the runtime is missing, so an install would be offered.
    bare: dict[str, object] = {"model": "qwen3-4b", "extra": "mlx", "missing": ["mlx_lm"]}
    bare.update(command=["pip"], python="python3", unavailable=None)
    monkeypatch.setattr(
        runtime, "runtime_report", lambda model, endpoint=None, engine="mlx": dict(bare)
    )

    report = model_runtime_answer("qwen3-4b", None)

    assert report.modelAvailable is False
    assert "neither in the hub cache nor downloadable" in (report.modelDetail or "")
