"""The daemon over stdio driving SmolLM2 (the real-model tier: see tests/real_model)."""

from __future__ import annotations

import pytest

from counterfoil.testing.smollm2 import require_smollm2

from .conftest import StartDaemon

# The file's absence is said first: the 135M model otherwise copies the prompt's last tool
# example (edit_file, with its placeholders) instead of the action it is asked for.
GOAL = (
    "notes.txt does not exist yet: create it. Reply with exactly this action: "
    '{"tool":"write_file","path":"notes.txt","content":"hi"}'
)


@pytest.fixture(scope="module")
def smollm2() -> str:
    return require_smollm2()


async def test_smollm2_drives_a_daemon_run_over_stdio(
    start_daemon: StartDaemon, smollm2: str
) -> None:
    settings = {
        "model": smollm2,
        "engine": "mlx",
        "maxTokens": 40,
        "maxSteps": 2,
        "allowWrites": True,
    }
    daemon = await start_daemon(settings)
    result = await daemon.request("counterfoil/run", {"goal": GOAL})

    assert result["reason"] in {"completed", "step_limit", "repeated_action_limit"}, result
    texts = daemon.told("counterfoil/modelText")
    assert texts and all(text["runId"] == result["runId"] for text in texts)
    assert any(state["state"] == "ready" for state in daemon.model_states)
    assert daemon.confirms, "the model's action never reached the approval"
    prefill = [s["message"] for s in daemon.model_states if s["message"].startswith("prefill ")]
    assert prefill, "no prefill progress reached the editor"
    assert (daemon.root / "notes.txt").is_file()
    proposed_by = daemon.receipts[-1]["approval"]["model"]
    assert proposed_by["spec"] == smollm2 and proposed_by["resolved"]["gguf"]
