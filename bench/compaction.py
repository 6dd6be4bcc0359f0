"""A run of 40 commands, 3 KB of output each, within a 12,000-token budget.

Real commands run under the gate with receipts in a real log; a script stands in for the
model and the budget is counted by the core's estimate (about four characters a token). Side by
side: the run as it is now (old effects compact to their receipt-backed records, long results
are externalized) and the run with only reads elidable, as before compaction (the same
workspace seen without its receipt store), which cannot hold 40 command outputs and ends at
`context_limit`. Prints a table, then one JSON line of the figures.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from workload import ReadsOnly, sized

COMMANDS = sized(40, 6)
OUTPUT_CHARS = 3_000
BUDGET = 12_000
GOAL = "run every check and say which passed"


def check(number: int) -> tuple[str, ...]:
    return (sys.executable, "-c", f"print('check {number} ' + 'x' * {OUTPUT_CHARS})")


def one_run(compaction: bool) -> dict[str, Any]:
    from counterfoil import AgentLimits, ReceiptStore, ToolPolicy, Workspace, run_agent
    from counterfoil.context.budget import estimate_tokens
    from counterfoil.context.compaction import COMPACTED_PREFIX
    from counterfoil.gate.workspace_setup import WorkspaceSetup

    checks = tuple(check(number) for number in range(COMMANDS))
    script = [json.dumps({"tool": "run_command", "argv": list(argv)}) for argv in checks]
    script.append(json.dumps({"final": "all checks ran"}))
    prompts: list[int] = []

    def model(messages: list[dict[str, str]]) -> str:
        prompts.append(estimate_tokens(messages))
        return script[len(prompts) - 1]

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        store = ReceiptStore(root / ".counterfoil" / "receipts.jsonl")
        (root / ".counterfoil").mkdir()
        workspace: Any = Workspace(
            ToolPolicy(root, allowed_commands=checks),
            receipt_store=store,
            setup=WorkspaceSetup(confirm_proposal=lambda _: True),
        )
        if not compaction:
            workspace = ReadsOnly(workspace)
        limits = AgentLimits(
            max_steps=COMMANDS + 1, max_context_tokens=BUDGET, max_inline_chars=16_000
        )
        messages: list[dict[str, str]] = []
        started = time.perf_counter()
        run = run_agent(GOAL, model, workspace, limits, messages=messages)
        seconds = time.perf_counter() - started
    return {
        "reason": run.reason,
        "steps": len(run.events),
        "largest_prompt_tokens": max(prompts),
        "compacted": sum(1 for m in messages if m["content"].startswith(COMPACTED_PREFIX)),
        "prompts": prompts,
        "seconds": seconds,
    }


def main() -> None:
    now, before = one_run(compaction=True), one_run(compaction=False)
    print(f"{COMMANDS} commands of {OUTPUT_CHARS} characters, budget {BUDGET} tokens (estimated)")
    print(f"{'turn':>4} {'prompt tokens':>13} {'prompt tokens':>13}")
    print(f"{'':>4} {'compaction':>13} {'reads only':>13}")
    for turn in range(len(now["prompts"])):
        shown = before["prompts"][turn] if turn < len(before["prompts"]) else "-"
        print(f"{turn + 1:>4} {now['prompts'][turn]:>13} {shown:>13}")
    print(f"{'':<12} {'ended':<14} {'steps':>5} {'max prompt':>10} {'compacted':>9} {'s':>6}")
    for name, side in (("compaction", now), ("reads only", before)):
        print(
            f"{name:<12} {side['reason']:<14} {side['steps']:>5} "
            f"{side['largest_prompt_tokens']:>10} {side['compacted']:>9} {side['seconds']:>6.1f}"
        )
    figures = {
        "benchmark": "compaction",
        "commands": COMMANDS,
        "output_chars": OUTPUT_CHARS,
        "budget_tokens": BUDGET,
        "completed": now["reason"] == "completed",
        "steps": now["steps"],
        "largest_prompt_tokens": now["largest_prompt_tokens"],
        "compacted_records": now["compacted"],
        "reads_only_reason": before["reason"],
        "reads_only_steps": before["steps"],
        "seconds": round(now["seconds"], 2),
    }
    print(json.dumps(figures))
    sys.exit(0 if figures["completed"] and now["largest_prompt_tokens"] <= BUDGET else 1)


if __name__ == "__main__":
    main()
