"""`counterfoil doctor`: each check against real files, a real HTTP server and a real process."""

from __future__ import annotations

import http.server
import io
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from counterfoil import EffectReceipt, ReceiptStore
from counterfoil.cli.doctor import key_check, model_cache_check, receipt_log_check
from counterfoil.cli.main import main
from counterfoil.models.hub.availability import endpoint_check, model_check

SERVER = Path(__file__).resolve().parents[2] / "server"


def doctor(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["doctor", *args], stdout=out)
    return code, out.getvalue()


def write_receipt(log: Path) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    ReceiptStore(log).put(
        EffectReceipt(
            tool_call_id="call-1",
            tool="edit_file",
            arguments={"path": "app.py"},
            exit_state="ok",
            result="edited app.py",
            changed_artifacts=("app.py",),
        )
    )


@pytest.fixture
def http_server() -> Iterator[str]:
    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_verified_receipt_log_is_ok_and_a_tampered_one_fails_the_doctor(tmp_path: Path) -> None:
    log = tmp_path / ".counterfoil" / "receipts.jsonl"
    write_receipt(log)
    assert receipt_log_check(tmp_path, ".counterfoil/receipts.jsonl").ok
    log.write_text(log.read_text().replace("edited app.py", "edited app.pz"))
    code, report = doctor("--root", str(tmp_path))
    assert code == 1
    assert "BAD receipt log" in report and "line 1" in report
    assert report.endswith("problems: receipt log\n")


def test_a_missing_receipt_log_is_not_a_problem(tmp_path: Path) -> None:
    check = receipt_log_check(tmp_path, ".counterfoil/receipts.jsonl")
    assert check.ok and check.detail.endswith("none yet")


def test_an_endpoint_that_answers_at_all_is_reachable_and_a_closed_port_is_not(
    http_server: str,
) -> None:
    assert endpoint_check(http_server).ok
    assert "HTTP 404" in endpoint_check(http_server).detail
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    unreachable = endpoint_check(closed, timeout=2)
    assert not unreachable.ok and "not reachable" in unreachable.detail


def test_known_models_in_the_hub_cache_are_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = tmp_path / "models--Qwen--Qwen3-0.6B-MLX-4bit" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (tmp_path / "models--Qwen--Qwen3-8B-MLX-4bit" / "snapshots").mkdir(parents=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    check = model_cache_check()
    assert check.detail == f"{tmp_path}: qwen3-0.6b"


def test_a_model_neither_cached_nor_reachable_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", closed)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # the suite runs offline; ask the hub
    check = model_check("qwen3-4b", timeout=2)
    assert not check.ok and "neither in the hub cache nor downloadable" in check.detail
    assert doctor("--model", "qwen3-4b")[1].endswith("problems: model\n")


def test_a_cached_local_or_scripted_model_is_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not model_check("qwen3-4b").ok
    (tmp_path / "models--Qwen--Qwen3-4B-MLX-4bit" / "snapshots" / "abc").mkdir(parents=True)
    assert model_check("qwen3-4b").ok
    assert model_check(str(tmp_path)).ok
    assert model_check("scripted:/any.jsonl").ok


def test_a_gguf_file_the_import_would_refuse_is_a_problem_with_the_reason(
    tmp_path: Path,
) -> None:
    pytest.importorskip("gguf")
    from counterfoil.testing.tiny_gguf import build_tiny_gguf

    taken = build_tiny_gguf(
        tmp_path / "qwen.gguf", architecture="qwen2", vocab_size=400, corpus_bytes=20_000
    )
    assert model_check(str(taken)).ok
    refused = build_tiny_gguf(
        tmp_path / "falcon.gguf", architecture="falcon", vocab_size=400, corpus_bytes=20_000
    )
    check = model_check(str(refused))
    assert not check.ok and "'falcon' model" in check.detail
    damaged = tmp_path / "damaged.gguf"
    damaged.write_bytes(taken.read_bytes()[:100])
    check = model_check(str(damaged))
    assert not check.ok and "is not a GGUF file Counterfoil can read" in check.detail


def test_the_doctor_names_python_packages_and_the_mlx_backend_in_a_subprocess(
    tmp_path: Path,
) -> None:
    environment = {**os.environ, "PYTHONPATH": str(SERVER), "HF_HUB_CACHE": str(tmp_path)}
    finished = subprocess.run(
        [sys.executable, "-m", "counterfoil", "doctor"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    lines = finished.stdout.splitlines()
    assert lines[0].startswith(f"ok  python: {sys.version_info.major}.{sys.version_info.minor}.")
    assert any(line.startswith("ok  pygls: ") for line in lines), finished.stdout
    assert any(line.startswith("ok  mlx backend: ") for line in lines), finished.stdout
    assert finished.returncode == 0, finished.stdout + finished.stderr


def test_the_doctor_names_the_key_variable_and_host_never_the_key(
    http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_KEY", "sk-live-0123456789abcdef")

    code, report = doctor("--endpoint", http_server, "--api-key-env", "TEAM_KEY")

    assert "ok  model server key: TEAM_KEY is set; it is sent only to 127.0.0.1" in report
    assert "sk-live" not in report
    assert code == 0


def test_the_doctor_says_a_key_is_never_sent_in_the_clear_to_another_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-0123456789abcdef")

    check = key_check("http://192.0.2.1:9/v1", None)

    assert not check.ok
    assert "OPENAI_API_KEY" in check.detail and "192.0.2.1" in check.detail
    assert "sk-live" not in check.detail


def test_the_doctor_lists_the_folders_values_and_tries_none_of_its_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))
    folder = {
        "endpoint": "http://127.0.0.1:9/v1",
        "apiKeyEnv": "HOME",
        "commandSandbox": "off",
        "allowWrites": True,
        "allowedCommands": [["make", "deploy"]],
        "model": "scripted:fixtures/responses/fix-app.jsonl",
    }
    settings = {"layers": {"user": {"commandSandbox": "review"}, "folder": folder}}

    _, report = doctor("--root", str(tmp_path), "--settings", json.dumps(settings))

    assert 'folder setting: endpoint = "http://127.0.0.1:9/v1": ignored (yours kept)' in report
    assert 'folder setting: apiKeyEnv = "HOME": ignored (yours kept)' in report
    assert 'folder setting: commandSandbox = "off": ignored (yours kept)' in report
    assert "folder setting: allowWrites = true: waiting for your yes (yours kept)" in report
    assert 'allowedCommands = [["make", "deploy"]]: waiting for your yes' in report
    assert "endpoint:" not in report.replace("folder setting: endpoint", "")
