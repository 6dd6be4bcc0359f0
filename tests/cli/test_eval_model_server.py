"""`counterfoil eval` with a model server: the flags `agent` takes reach the server."""

from __future__ import annotations

import io
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.support.chat_servers import chat_servers, stream_tokens

from counterfoil.cli.main import main

TASK = Path(__file__).resolve().parents[2] / "fixtures" / "evals" / "localized-constant"


def final_answer(handler: BaseHTTPRequestHandler, number: int) -> None:
    stream_tokens(handler, ['{"final":', '"nothing to do"}'])


def test_eval_sends_its_runs_to_the_endpoint_with_the_servers_flags() -> None:
    with chat_servers() as start:
        url, recorded = start(final_answer)
        stdout = io.StringIO()
        status = main(
            ["eval", str(TASK), "--model", "tiny", "--endpoint", url, "--schema-mode", "none"]
            + ["--max-tokens", "77", "--context-tokens", "3000", "--json"],
            stdout=stdout,
        )
    task = json.loads(stdout.getvalue())["tasks"][0]
    assert status == 1  # the task is not solved by a final answer alone
    assert task["runs"][0]["reason"] != "model_not_loaded", task
    assert recorded.bodies, "no request reached the server"
    body = recorded.bodies[0]
    assert body["model"] == "tiny"
    assert 77 in (body.get("max_tokens"), body.get("max_completion_tokens"))
    assert "response_format" not in body
    identity = task["model_identity"]
    assert identity["resolved"] == {"endpoint": url, "served_model": "tiny"}
    assert identity["constrained"] is False and identity["sampling"]["max_tokens"] == 77


def test_eval_refuses_a_bad_server_flag_in_one_sentence() -> None:
    stdout = io.StringIO()
    status = main(["eval", str(TASK), "--model", "tiny", "--max-tokens", "0"], stdout=stdout)
    assert status == 2
    assert stdout.getvalue().startswith("error: ") and "--max-tokens" in stdout.getvalue()
