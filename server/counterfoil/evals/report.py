"""The results of an evaluation: per task and model, over N runs, as a table or one JSON document.

A task's status over its runs: `passed` when every run passed, `failed` when any failed, else
`error` (a run that could not be judged: the model failed or a receipt could not be written).
A model's pass rate is the mean over its runs of the share of tasks passed in that run; its
spread is their standard deviation, least and greatest, so two models are compared on how
steady they are as well as how often right.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from .runner import TaskRun

SCHEMA_VERSION = 1
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
        if statuses == {"passed"}:
            return "passed"
        return "failed" if "failed" in statuses else "error"


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
        "models": [
            {
                "model": summary.model,
                "tasks": summary.tasks,
                "passed_runs": summary.passed_runs,
                "total_runs": summary.total_runs,
                "pass_rate": round(summary.pass_rate, 4),
                "spread": {
                    "stdev": round(summary.stdev, 4),
                    "min": round(summary.least, 4),
                    "max": round(summary.greatest, 4),
                },
            }
            for summary in summaries
        ],
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
            "files_changed": [change.path for change in verdict.files_changed],
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
    }


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def table(results: list[TaskResult], models: list[str]) -> str:
    """The readable report: per model a summary line, then a row per task and, under a task
    that did not pass, what failed."""
    lines: list[str] = []
    for model in models:
        mine = [result for result in results if result.model == model]
        summary = summarize(model, mine)
        lines.append(
            f"model {one_line(model)}: pass rate {summary.pass_rate:.0%} "
            f"({summary.passed_runs}/{summary.total_runs} runs; spread ±{summary.stdev:.0%}, "
            f"{summary.least:.0%}–{summary.greatest:.0%})"
        )
        lines.append(
            f"  {'task':<28} {'status':<7} {'pass':>5} {'steps':>5} {'bad':>4} {'errs':>4} "
            f"{'prompt':>8} {'prefill':>8} {'gen':>6} {'cache':>6} {'time':>7}"
        )
        for result in mine:
            lines.append(_row(result))
            lines.extend(_problems(result))
        lines.append("")
    lines.append(f"overall: {overall_status(results)}")
    return "\n".join(lines) + "\n"


def _row(result: TaskResult) -> str:
    runs = result.runs
    metrics = [run.metrics for run in runs]

    def mean(values: list[float]) -> float:
        return statistics.fmean(values) if values else 0.0

    def tokens(name: str) -> str:
        values = [getattr(metric, name) for metric in metrics]
        return _count(sum(values) // len(values)) if values and None not in values else "-"

    reuse = [metric.cache_reuse for metric in metrics if metric.cache_reuse is not None]
    return (
        f"  {result.task:<28} {result.status:<7} {f'{result.passed_runs}/{len(runs)}':>5} "
        f"{mean([m.steps for m in metrics]):>5.1f} "
        f"{mean([m.malformed_actions for m in metrics]):>4.1f} "
        f"{mean([m.tool_errors for m in metrics]):>4.1f} "
        f"{tokens('prompt_tokens'):>8} {tokens('prefilled_tokens'):>8} "
        f"{tokens('generated_tokens'):>6} "
        f"{(f'{mean(reuse):.0%}' if reuse else '-'):>6} "
        f"{mean([m.wall_seconds for m in metrics]):>6.2f}s"
    )


def _problems(result: TaskResult) -> list[str]:
    """What went wrong in each run that did not pass, once per distinct problem."""
    seen: list[str] = []
    for run in result.runs:
        if run.status == "passed":
            continue
        found = [f"error ({run.reason}): {run.error}"] if run.status == "error" else []
        found += [f"✗ {c.name} ({c.type}): {c.detail}" for c in run.checks if not c.passed]
        found += [f"✗ forbidden modification: {m.path} {m.change}" for m in run.forbidden]
        if not run.receipts.ok:
            found.append(f"✗ receipts do not verify: {run.receipts.error}")
        if run.status == "failed":
            found.append(f"  run ended: {run.reason}; validation {run.verdict.validation}")
        seen += [line for line in map(one_line, found) if line not in seen]
    return [f"      {line}" for line in seen]
