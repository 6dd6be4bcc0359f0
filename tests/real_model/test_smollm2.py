"""SmolLM2 driving Counterfoil: real text, valid constrained actions, the approval path, the
prompt cache across turns with the real chat template, and a resumed KV cache."""

from __future__ import annotations

import io
from pathlib import Path

from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, ToolPolicy, parse_action, run_agent
from counterfoil.receipts import ReceiptStore, verify_receipt_log

from .conftest import smollm2_generate

SYSTEM = "You are a helpful assistant."
# The file's absence is said first: the 135M model otherwise copies the prompt's last tool
# example (edit_file, with its placeholders) instead of the action it is asked for.
WRITE_GOAL = (
    "notes.txt does not exist yet: create it. Reply with exactly this action: "
    '{"tool":"write_file","path":"notes.txt","content":"hello"}'
)


def test_smollm2_greedy_answer_is_coherent(smollm2: str) -> None:
    generate = smollm2_generate(smollm2, max_tokens=12, constrain=False)
    text = generate(
        [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "What is the capital of France?"},
        ]
    )
    assert "Paris" in text, text
    compute = generate.loaded.compute
    assert compute is not None
    expected = "dequantized to float32" if compute.blas == "OpenBLAS" else "quantized"
    assert compute.weights.startswith(expected), compute


def test_constrained_actions_are_valid_on_every_step_of_a_ten_step_run(
    smollm2: str, empty_root: Path
) -> None:
    (empty_root / "app.py").write_text("print('hi')\n", encoding="utf-8")
    policy = ToolPolicy(empty_root, allow_writes=True)
    workspace = make_workspace(
        policy, confirm_tool=lambda _action: False, store=ReceiptStore(empty_root / "r.jsonl")
    )
    generate = smollm2_generate(smollm2, max_tokens=40)
    run = run_agent(
        "Look at the files, then add a comment to app.py.",
        generate,
        workspace,
        AgentLimits(max_steps=10, max_identical_actions=10),
    )
    assert run.events, run.error
    for event in run.events:
        if event.result == "error: identical action loop detected":
            continue
        assert event.action is not None, (event.response, event.result)
        assert parse_action(event.response, workspace.available_tools) == event.action
    assert run.reason in {"completed", "step_limit", "repeated_action_limit"}, run.reason


def test_cli_cycle_proposes_one_exact_write_that_is_approved_and_receipted(
    smollm2: str, empty_root: Path
) -> None:
    from counterfoil.cli.main import main

    output = io.StringIO()
    main(
        [
            "agent",
            WRITE_GOAL,
            "--root",
            str(empty_root),
            "--model",
            smollm2,
            "--engine",
            "mlx",
            "--allow-writes",
            "--max-steps",
            "2",
            "--max-tokens",
            "40",
        ],
        stdin=io.StringIO("y\ny\n"),
        stdout=output,
    )
    text = output.getvalue()
    assert "Traceback" not in text
    assert "compute: cpu, weights " in text
    assert "--- approval needed ---" in text, text
    assert "write_file" in text
    written = [path for path in empty_root.iterdir() if path.name != ".counterfoil"]
    assert written, text
    log = empty_root / ".counterfoil" / "receipts.jsonl"
    report = verify_receipt_log(log)
    assert report.ok, report
    assert "model identity: " in text
    (receipt, *_) = ReceiptStore(log).receipts()
    model = receipt.evidence.approval.model
    assert model.spec == smollm2 and len(model.resolved["gguf_sha256"]) == 64


def test_prompt_cache_is_reused_across_turns_with_the_real_template(smollm2: str) -> None:
    generate = smollm2_generate(smollm2, max_tokens=8, constrain=False)
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Name a colour."},
    ]
    answer = generate(messages)
    messages += [
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "Name another."},
    ]
    generate(messages)
    first, second = generate.stats
    assert first.prefilled_tokens == first.prompt_tokens
    assert second.prefilled_tokens < second.prompt_tokens - first.prompt_tokens + 8


def test_resume_from_a_saved_kv_cache_gives_identical_tokens(smollm2: str, tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Count from one to three."},
    ]
    first = smollm2_generate(smollm2, max_tokens=8, constrain=False)
    answer = first(list(messages))
    conversation = [
        *messages,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "And to five?"},
    ]
    state = first.save_checkpoint(conversation)
    path = tmp_path / "cache.safetensors"
    first.write_prompt_cache(str(path))

    resumed = smollm2_generate(smollm2, max_tokens=8, constrain=False)
    resumed.read_prompt_cache(str(path), state.cached_token_ids)
    resumed(conversation)
    cold = smollm2_generate(smollm2, max_tokens=8, constrain=False)
    cold(conversation)
    assert resumed.stats[0].prefilled_tokens < cold.stats[0].prefilled_tokens
    assert resumed.stats[0].token_ids == cold.stats[0].token_ids
