from __future__ import annotations

import io
from itertools import cycle
from pathlib import Path

from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, ToolPolicy, parse_action, run_agent
from counterfoil.models import GenerationOptions, load_generate
from counterfoil.receipts import ReceiptStore, verify_receipt_log

VALIDATE = ("python", "validate.py")
ENDINGS = {"completed", "step_limit", "repeated_action_limit", "context_limit"}


def test_tiny_model_run_with_scripted_approvals_ends_with_a_defined_reason(
    tiny_model_spec: str, demo_project: Path
) -> None:
    policy = ToolPolicy(demo_project, allow_writes=True, allowed_commands=(VALIDATE,))
    answers = cycle([True, False])
    asked: list[str] = []

    def confirm(action: object) -> bool:
        asked.append(getattr(action, "tool", "?"))
        return next(answers)

    log = demo_project / ".agent-receipts.jsonl"
    workspace = make_workspace(policy, confirm_tool=confirm, store=ReceiptStore(log))
    generate = load_generate(tiny_model_spec, GenerationOptions(max_tokens=48))
    run = run_agent(
        "Change the greeting to Welcome, write NOTES.md, then run python validate.py.",
        generate,
        workspace,
        AgentLimits(max_steps=8),
    )

    assert run.reason in ENDINGS, run.error
    assert run.events
    for event in run.events:
        if event.result == "error: identical action loop detected":
            continue
        assert event.action is not None, event.result
        assert parse_action(event.response, workspace.available_tools) == event.action
    effects = [
        e
        for e in run.events
        if getattr(e.action, "tool", None) in ("write_file", "edit_file", "run_command")
    ]
    assert len(asked) <= len(effects)
    report = verify_receipt_log(log) if log.exists() else None
    assert report is None or report.ok, report


def test_cli_agent_runs_end_to_end_with_the_tiny_model(
    tiny_model_spec: str, demo_project: Path
) -> None:
    from counterfoil.cli.main import main

    output = io.StringIO()
    code = main(
        [
            "agent",
            "Make the greeting say Welcome and validate it.",
            "--root",
            str(demo_project),
            "--model",
            tiny_model_spec,
            "--allow-writes",
            "--allow-command",
            "python validate.py",
            "--max-steps",
            "4",
            "--max-tokens",
            "40",
        ],
        stdin=io.StringIO("y\nn\ny\nn\n"),
        stdout=output,
    )
    text = output.getvalue()
    assert "== run ended: " in text
    ended = text.split("== run ended: ", 1)[1].split(" ==", 1)[0]
    assert ended in ENDINGS, text
    assert code in ((0, 1) if ended == "completed" else (3,)), text
    assert "Traceback" not in text
    # mlx-lm's own counters: every response after the first reuses the cached prompt prefix.
    usage = text.split("model usage: ", 1)[1].split("\n", 1)[0]
    assert " prompt tokens (" in usage and " from the cache), " in usage, usage
