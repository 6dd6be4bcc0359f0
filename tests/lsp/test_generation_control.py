"""Stopping a model mid-generation, and what a follow-up prefills, with the tiny MLX model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types
from tests.support.processes import GUARD_SECONDS

from .conftest import Daemon, StartDaemon


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


# Stop's target (cancelled within 0.5 s of the request) is measured by bench/lsp_roundtrip.py,
# where a loaded machine cannot fail a test. Here: the run ends on the cancel, long before its
# 200,000 tokens.


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    for module in ("mlx.core", "mlx_lm", "llguidance", "tokenizers"):
        pytest.importorskip(module)
    from counterfoil.testing.tiny_model import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen3", seed=3))


def _generating(daemon: Daemon) -> bool:
    return any(
        state["tokens"] >= 5 for state in daemon.model_states if state["state"] == "generating"
    )


async def test_cancel_stops_generation_at_once(start_daemon: StartDaemon, tiny_model: str) -> None:
    settings: dict[str, Any] = {
        "model": tiny_model,
        "constrainedDecoding": False,
        "maxTokens": 200_000,
    }
    daemon = await start_daemon(settings)
    pending = daemon.send("counterfoil/run", {"goal": "say a lot"}, msg_id="run-1")
    await daemon.until(lambda: _generating(daemon), timeout=120)

    daemon.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-1"))
    result = await asyncio.wait_for(pending, GUARD_SECONDS)  # not the 200,000 tokens' end

    assert result["reason"] == "cancelled"
    assert max(state["tokens"] for state in daemon.model_states) < 200_000
    assert [s["state"] for s in daemon.told("counterfoil/runState")] == [
        "running",
        "stopping",
        "cancelled",
    ]
    texts = daemon.told("counterfoil/modelText")
    assert texts and all(t["runId"] == result["runId"] and t["step"] == 1 for t in texts)
    tokens = max(s["tokens"] for s in daemon.model_states)
    assert len(texts) < tokens  # batched, not one message per token
    assert (await daemon.request("counterfoil/status", {}))["modelState"] == "ready"


def _prefilled(daemon: Daemon) -> list[int]:
    return [
        s["promptTokens"]
        for s in daemon.model_states
        if s["state"] == "ready" and s["promptTokens"] is not None
    ]


async def test_a_follow_up_prefills_only_its_new_tokens(
    start_daemon: StartDaemon, tiny_model: str
) -> None:
    settings = {"model": tiny_model, "maxTokens": 16, "maxSteps": 1}
    daemon = await start_daemon(settings)
    await daemon.request("counterfoil/run", {"goal": "look around the project"})
    (fresh,) = _prefilled(daemon)

    result = await daemon.request("counterfoil/followUp", {"text": "and now?"})

    assert result["followUp"] is True
    follow_up = _prefilled(daemon)[-1]
    assert follow_up * 2 < fresh, (follow_up, fresh)  # the shared prefix is not prefilled again
