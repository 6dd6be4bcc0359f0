"""The results of an evaluation: per task and model, over N runs, as a table or one JSON document.

A task's status over its runs: `passed` when every run passed, `failed` when any failed, else
`error` (a run that could not be judged: the model failed or a receipt could not be written).
A model's pass rate is the mean over its runs of the share of tasks passed in that run; its
spread is their standard deviation, least and greatest, so two models are compared on how
steady they are as well as how often right. A model that could not be loaded for any run was
not run: it has the reason instead of a pass rate (0% would say it tried and failed).

The JSON document is the structured result; the table (`table.py`) and the HTML page
(`html.py`) are drawn from the same `TaskResult`s and say nothing it does not hold.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from .runner import TaskRun

SCHEMA_VERSION = 2
NOT_LOADED = "model_not_loaded"
# Every control character (newline and tab too), DEL and C1 is shown as `\xNN`: a name a model
# chose can then never start a line of its own (a forged `overall: passed`) in the table.
_ONE_LINE = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}
_ONE_LINE |= {0x2028: "\\u2028", 0x2029: "\\u2029"}


def one_line(text: str) -> str:
    """`text` with every character that could break or rewrite a line made visible."""
    return text.translate(_ONE_LINE)


@dataclass(frozen=True)
class TaskResult:
    model: str
    task: str
    package: str
    runs: tuple[TaskRun, ...]
    model_identity: dict[str, Any] | None = None  # `ModelIdentity.as_record()`; None: scripted

    @property
    def passed_runs(self) -> int:
        return sum(1 for run in self.runs if run.status == "passed")

    @property
    def pass_rate(self) -> float:
        return self.passed_runs / len(self.runs) if self.runs else 0.0

    @property
    def status(self) -> str:
        statuses = {run.status for run in self.runs}
        if not_run_reason(list(self.runs)) is not None:
            return "not_run"
        if statuses == {"passed"}:
            return "passed"
        return "failed" if "failed" in statuses else "error"


@dataclass(frozen=True)
class RunCost:
    """What runs cost in all: tokens (None when the model reports none), seconds, and the
    prompt tokens a cache served, which the model did not have to prefill."""

    prompt_tokens: int | None
    generated_tokens: int | None
    prefill_avoided: int | None
    seconds: float


def total_cost(runs: list[TaskRun]) -> RunCost:
    def total(values: list[int | None]) -> int | None:
        return None if not values or None in values else sum(v for v in values if v is not None)

    metrics = [run.metrics for run in runs if run.reason != NOT_LOADED]
    return RunCost(
        total([m.prompt_tokens for m in metrics]),
        total([m.generated_tokens for m in metrics]),
        total([m.cached_tokens for m in metrics]),
        round(sum(m.wall_seconds for m in metrics), 4),
    )


def not_run_reason(runs: list[TaskRun]) -> str | None:
    """Why a model ran nothing: every run of it is one its model could not be loaded for."""
    if runs and all(run.reason == NOT_LOADED for run in runs):
        return runs[0].error or "the model could not be loaded"
    return None


@dataclass(frozen=True)
class ModelSummary:
    model: str
    tasks: int
    passed_runs: int
    total_runs: int
    pass_rate: float
    stdev: float
    least: float
    greatest: float
    cost: RunCost = RunCost(None, None, None, 0.0)
    not_run: str | None = None  # why the model ran nothing (then its rates mean nothing)


def summarize(model: str, results: list[TaskResult]) -> ModelSummary:
    rounds = max((len(result.runs) for result in results), default=0)
    shares = [
        sum(
            1
            for result in results
            if index < len(result.runs) and result.runs[index].status == "passed"
        )
        / len(results)
        for index in range(rounds)
    ]
    return ModelSummary(
        model,
        len(results),
        sum(result.passed_runs for result in results),
        sum(len(result.runs) for result in results),
        statistics.fmean(shares) if shares else 0.0,
        statistics.stdev(shares) if len(shares) > 1 else 0.0,
        min(shares, default=0.0),
        max(shares, default=0.0),
        total_cost([run for result in results for run in result.runs]),
        not_run_reason([run for result in results for run in result.runs]),
    )


def overall_status(results: list[TaskResult]) -> str:
    return (
        "passed" if results and all(result.status == "passed" for result in results) else "failed"
    )


def document(results: list[TaskResult], models: list[str], runs: int) -> dict[str, Any]:
    """The one JSON document `counterfoil eval --json` prints."""
    summaries = [summarize(model, [r for r in results if r.model == model]) for model in models]
    return {
        "schema_version": SCHEMA_VERSION,
        "status": overall_status(results),
        "runs_per_task": runs,
        "models": [_model_record(summary) for summary in summaries],
        "tasks": [
            {
                "model": result.model,
                "task": result.task,
                "package": result.package,
                "status": result.status,
                "passed_runs": result.passed_runs,
                "pass_rate": round(result.pass_rate, 4),
                "runs": [run_record(run) for run in result.runs],
                "model_identity": result.model_identity,
            }
            for result in results
        ],
    }


def _model_record(summary: ModelSummary) -> dict[str, Any]:
    ran = summary.not_run is None
    return {
        "model": summary.model,
        "not_run": summary.not_run,
        "tasks": summary.tasks,
        "passed_runs": summary.passed_runs,
        "total_runs": summary.total_runs,
        "pass_rate": round(summary.pass_rate, 4) if ran else None,
        "spread": {
            "stdev": round(summary.stdev, 4),
            "min": round(summary.least, 4),
            "max": round(summary.greatest, 4),
        }
        if ran
        else None,
        "cost": {
            "prompt_tokens": summary.cost.prompt_tokens,
            "generated_tokens": summary.cost.generated_tokens,
            "prefill_avoided_tokens": summary.cost.prefill_avoided,
            "seconds": summary.cost.seconds,
        },
    }


def run_record(run: TaskRun) -> dict[str, Any]:
    metrics = run.metrics
    verdict = run.verdict
    return {
        "status": run.status,
        "reason": run.reason,
        "checks": [
            {"name": c.name, "type": c.type, "passed": c.passed, "detail": c.detail}
            for c in run.checks
        ],
        "forbidden_modifications": [{"path": m.path, "change": m.change} for m in run.forbidden],
        "receipts": {
            "ok": run.receipts.ok,
            "count": run.receipts.count,
            "error": run.receipts.error,
        },
        "verdict": {
            "validation": verdict.validation,
            "approved": list(verdict.approved),
            "rejected": list(verdict.rejected),
            "refused": list(verdict.refused),
            "failed": list(verdict.failed),
            "review_rejected": list(verdict.review_rejected),
            "files_changed": [change.path for change in verdict.files_changed],
            "effects": [
                {
                    "call_id": effect.call_id,
                    "tool": effect.tool,
                    "state": effect.state,
                    "path": effect.path,
                    "argv": None if effect.argv is None else list(effect.argv),
                    "reason": effect.reason,
                }
                for effect in verdict.effects
            ],
        },
        "metrics": {
            "steps": metrics.steps,
            "malformed_actions": metrics.malformed_actions,
            "tool_errors": metrics.tool_errors,
            "prompt_tokens": metrics.prompt_tokens,
            "prefilled_tokens": metrics.prefilled_tokens,
            "generated_tokens": metrics.generated_tokens,
            "cached_tokens": metrics.cached_tokens,
            "cache_reuse": None if metrics.cache_reuse is None else round(metrics.cache_reuse, 4),
            "wall_seconds": metrics.wall_seconds,
        },
        "final": run.final,
        "error": run.error,
        "transcript": run.transcript,
    }
