"""Where a person reads what one evaluation run did: its transcript and its receipt log, kept
after the run's private copy is removed.

`transcript.jsonl` holds the task's prompt, then one line per step (the model's response as it
came, the observation, the whole text the model read when that is more (`told`), and the
effect call's id and fate), then how the run ended; `receipts.jsonl` is the run's receipt log
byte for byte, with its head record beside it (and the signatures in both where the run
signed), so `counterfoil receipts verify` can check it later. The report links to the folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from ..loop import AgentRun
from ..receipts.head import head_path

TRANSCRIPT_NAME = "transcript.jsonl"
RECEIPTS_NAME = "receipts.jsonl"


def run_folder(root: Path, model_number: int, task: str, run_number: int) -> Path:
    """`root/<model number>-<task id>-<run number>`: a task id is a safe file name (the package
    loader refuses any other), and a model spec is not, so the model is named by its number."""
    return root / f"{model_number}-{task}-{run_number}"


def keep_transcript(folder: Path, prompt: str, run: AgentRun, receipt_log: Path) -> Path:
    """Write the run's transcript and a copy of its receipt log into `folder`; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, Any]] = [{"prompt": prompt}]
    for event in run.events:
        result = event.step_result
        lines.append(
            {
                "step": event.step,
                "response": event.response,
                "observation": event.result,
                "told": event.told,
                "call_id": None if result is None else result.call_id,
                "state": None if result is None else result.state,
            }
        )
    lines.append({"ended": run.reason, "final": run.final, "error": run.error})
    path = folder / TRANSCRIPT_NAME
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    if receipt_log.is_file():
        kept = folder / RECEIPTS_NAME
        shutil.copyfile(receipt_log, kept)
        if head_path(receipt_log).is_file():  # the head: without it the log cannot verify
            shutil.copyfile(head_path(receipt_log), head_path(kept))
    return path
