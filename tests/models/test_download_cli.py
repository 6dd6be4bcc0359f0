"""`counterfoil download MODEL` and the download before `counterfoil agent`, on a local hub."""

from __future__ import annotations

import hashlib
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support.hub_server import (
    REPO,
    WEIGHTS,
    HubServer,
    cache,
    hub,
    serve_hub,
    write_model_folder,
)
from tests.support.processes import interruptible

from counterfoil.cli.main import main
from counterfoil.cli.model_download import format_progress
from counterfoil.models.hub.download import DownloadProgress

__all__ = ["cache", "hub"]  # fixtures

SERVER = Path(__file__).resolve().parents[2] / "server"


def run_main(*argv: str) -> tuple[int, str]:
    output = io.StringIO()
    status = main(list(argv), stdin=io.StringIO(""), stdout=output)
    return status, output.getvalue()


def test_progress_reads_as_percent_of_size_rate_and_time_left() -> None:
    progress = DownloadProgress(943_718_400, 2_469_606_195, 12_582_912.0, 121.0, "downloading")

    assert format_progress(progress) == "downloading 38 % of 2.3 GiB, 12.0 MiB/s, 2 min 01 s left"


def test_download_command_fetches_once_and_then_says_it_is_on_disk(
    hub: HubServer, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))

    status, output = run_main("download", REPO)

    assert status == 0
    assert "model owner/tiny (owner/tiny) is not on disk: downloading 293 KiB of 293 KiB" in output
    assert "downloading 100 % of 293 KiB" in output
    assert output.rstrip().splitlines()[-1].startswith("model owner/tiny is on disk: ")
    assert run_main("download", REPO) == (0, output.rstrip().splitlines()[-1] + "\n")
    assert len(hub.gets(WEIGHTS)) == 1


def test_download_command_names_the_way_out_for_a_wrong_name(
    hub: HubServer, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))

    status, output = run_main("download", "owner/missing")

    assert status == 2
    assert output.startswith("error: model owner/missing was not found on ")
    assert output.count("\n") == 1 and "scripted:PATH" in output


def test_agent_says_what_it_downloads_before_loading_a_model_not_on_disk(
    hub: HubServer, cache: Path, monkeypatch: pytest.MonkeyPatch, demo_project: Path
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))

    status, output = run_main("agent", "fix it", "--root", str(demo_project), "--model", REPO)

    announced = output.index("is not on disk: downloading 293 KiB")
    assert output.index("model owner/tiny is on disk: ") > announced
    assert len(hub.gets(WEIGHTS)) == 1
    assert status == 2  # the served folder holds no real weights: loading it fails afterwards


def test_ctrl_c_stops_the_download_and_running_it_again_resumes(tmp_path: Path) -> None:
    # The hub client writes in 10 MiB chunks: 24 MiB leaves a second of paced download after
    # the first bytes land, for the interrupt to arrive in.
    folder = write_model_folder(tmp_path / "repo", weights_bytes=24 * 1024 * 1024)
    home = tmp_path / "hf-home"
    with serve_hub({REPO: folder}) as server:
        server.piece_bytes = 256 * 1024
        server.seconds_per_piece = 0.02
        environment = {key: value for key, value in os.environ.items() if key != "HF_HUB_OFFLINE"}
        environment.update(HF_ENDPOINT=server.url, HF_HOME=str(home), PYTHONPATH=str(SERVER))
        command = [sys.executable, "-m", "counterfoil", "download", REPO]
        process = subprocess.Popen(
            interruptible(command),
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        weights = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
        deadline = time.monotonic() + 60
        # The weights' partial blob, not config.json's: that one may be caught mid-write too.
        while not any(p.stat().st_size for p in home.rglob(f"{weights}.incomplete")):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
        assert process.returncode == 130, output
        assert "download stopped; what arrived is kept: run it again to resume" in output
        [partial] = home.rglob("*.incomplete")
        assert partial.name == f"{weights}.incomplete"
        kept = partial.stat().st_size
        server.seconds_per_piece = 0.0

        resumed = subprocess.run(
            command, check=False, env=environment, capture_output=True, text=True, timeout=120
        )

        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "already here" in resumed.stdout
        assert server.gets(WEIGHTS)[-1].range == f"bytes={kept}-"
