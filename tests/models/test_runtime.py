"""Which extra a model needs, and the install command for the environment that lacks it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from counterfoil.models import runtime
from counterfoil.models.runtime import install_command, missing_runtime, needed_extra

SERVER = Path(__file__).resolve().parents[2] / "server"


def test_hub_models_need_mlx_endpoints_the_remote_client_and_scripts_nothing() -> None:
    assert needed_extra("qwen3-4b") == "mlx"
    assert needed_extra("/models/tiny") == "mlx"
    assert needed_extra("qwen3-4b", endpoint="http://127.0.0.1:8080/v1") == "remote"
    assert needed_extra("scripted:fixtures/responses/fix-app.jsonl") is None
    assert missing_runtime("scripted:anything.jsonl") is None


def test_an_installed_counterfoil_is_named_with_its_extra_for_this_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runtime, "_installed_in_site_packages", lambda: True)

    assert install_command("mlx") == (sys.executable, "-m", "pip", "install", "counterfoil[mlx]")


def without_site_packages(program: str) -> str:
    """What `program` prints in this Python with site-packages off the path (`-S`) and only the
    project's own code on PYTHONPATH: the bundled daemon's environment."""
    completed = subprocess.run(
        [sys.executable, "-S", "-c", program],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SERVER)},
        check=True,
        timeout=60,
    )
    return completed.stdout


def test_a_python_without_mlx_is_told_the_pip_command_for_its_own_environment() -> None:
    """`-S` leaves site-packages off the path: the bundled case, counterfoil on PYTHONPATH only."""
    program = (
        "import json, sys; from counterfoil.models.runtime import missing_runtime; "
        "need = missing_runtime('qwen3-4b'); "
        "print(json.dumps(None if need is None else "
        "[need.extra, list(need.modules), list(need.command), need.message]))"
    )

    extra, modules, command, message = json.loads(without_site_packages(program))
    assert extra == "mlx" and "mlx_lm" in modules
    assert command[:4] == [sys.executable, "-m", "pip", "install"]
    assert "mlx-lm==0.32.2" in command
    assert any(r.startswith("mlx[cpu]==0.32.4; sys_platform ==") for r in command)
    assert not any("extra" in requirement for requirement in command)
    assert message.endswith(shlex.join(command)) and sys.executable in message


def test_without_the_hub_client_a_download_names_the_runtime_install() -> None:
    """The bundled daemon has no huggingface_hub until the model runtime is installed."""
    program = (
        "from counterfoil.models.hub.download import ModelDownloadError, model_on_disk\n"
        "try:\n    model_on_disk('qwen3-4b')\n"
        "except ModelDownloadError as error:\n    print(error)\n"
    )

    said = without_site_packages(program)

    assert said.startswith("downloading models needs huggingface_hub, part of the model runtime: ")
    assert f"{sys.executable} -m pip install mlx-lm==0.32.2" in said


def test_on_windows_an_mlx_model_is_told_the_ways_that_work_not_an_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MLX publishes no Windows build: installing the extra there would only fail later."""
    monkeypatch.setattr(runtime, "current_platform", lambda: "win32")
    monkeypatch.setattr(runtime, "_importable", lambda module: False)

    need = missing_runtime("qwen3-4b")
    report = runtime.runtime_report("qwen3-4b")

    assert need is not None and need.command == ()
    assert need.message.startswith("MLX has no build for Windows")
    assert "model server" in need.message and "scripted:PATH" in need.message
    assert report["command"] == [] and report["unavailable"] == need.message
    # A model server needs only the remote client, which Windows can install.
    served = missing_runtime("tiny", endpoint="http://127.0.0.1:1234/v1")
    assert served is not None and served.unavailable is None
    assert served.command[1:4] == ("-m", "pip", "install")


def test_the_cli_refuses_an_mlx_model_on_windows_with_the_ways_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import io

    from counterfoil.cli.main import main

    monkeypatch.setattr(runtime, "current_platform", lambda: "win32")
    monkeypatch.setattr(runtime, "_importable", lambda module: False)
    output = io.StringIO()

    status = main(
        ["agent", "anything", "--root", str(tmp_path), "--model", "qwen3-4b"],
        stdin=io.StringIO(""),
        stdout=output,
    )

    assert status == 2
    assert "error: MLX has no build for Windows" in output.getvalue()
    assert "pip install" not in output.getvalue()
