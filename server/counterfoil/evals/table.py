"""The readable report of an evaluation, drawn from the same results as its JSON document.

Per model a summary line (its pass rate and what its runs cost, or why it was not run), then a
row per task with its cost columns, and under each task every run: why it ended, its transcript,
every check (passed ones too), the changes it was not allowed to make, and each write or
command the package denied or the gate refused, with the reason.
"""

from __future__ import annotations

import shlex
import statistics

from .report import RunCost, TaskResult, one_line, overall_status, summarize
from .runner import TaskRun


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def cost_line(cost: RunCost) -> str:
    return (
        f"cost {_count(cost.prompt_tokens)} prompt + {_count(cost.generated_tokens)} generated "
        f"tokens, {_count(cost.prefill_avoided)} prefill avoided, {cost.seconds:.2f} s"
    )


def table(results: list[TaskResult], models: list[str]) -> str:
    lines: list[str] = []
    for model in models:
        mine = [result for result in results if result.model == model]
        summary = summarize(model, mine)
        if summary.not_run is not None:
            lines += [f"model {one_line(model)}: not run: {one_line(summary.not_run)}", ""]
            continue
        lines.append(
            f"model {one_line(model)}: pass rate {summary.pass_rate:.0%} "
            f"({summary.passed_runs}/{summary.total_runs} runs; spread ±{summary.stdev:.0%}, "
            f"{summary.least:.0%}–{summary.greatest:.0%}); {cost_line(summary.cost)}"
        )
        lines.append(
            f"  {'task':<28} {'status':<7} {'pass':>5} {'steps':>5} {'bad':>4} {'errs':>4} "
            f"{'prompt':>8} {'prefill':>8} {'gen':>6} {'avoided':>8} {'time':>7}"
        )
        for result in mine:
            lines.append(_row(result))
            for number, run in enumerate(result.runs, 1):
                lines.extend(f"      {line}" for line in run_lines(number, run))
        lines.append("")
    lines.append(f"overall: {overall_status(results)}")
    return "\n".join(lines) + "\n"


def _row(result: TaskResult) -> str:
    metrics = [run.metrics for run in result.runs]

    def mean(values: list[float]) -> float:
        return statistics.fmean(values) if values else 0.0

    def tokens(name: str) -> str:
        values = [getattr(metric, name) for metric in metrics]
        return _count(sum(values) // len(values)) if values and None not in values else "-"

    return (
        f"  {result.task:<28} {result.status:<7} "
        f"{f'{result.passed_runs}/{len(result.runs)}':>5} "
        f"{mean([m.steps for m in metrics]):>5.1f} "
        f"{mean([m.malformed_actions for m in metrics]):>4.1f} "
        f"{mean([m.tool_errors for m in metrics]):>4.1f} "
        f"{tokens('prompt_tokens'):>8} {tokens('prefilled_tokens'):>8} "
        f"{tokens('generated_tokens'):>6} {tokens('cached_tokens'):>8} "
        f"{mean([m.wall_seconds for m in metrics]):>6.2f}s"
    )


def run_lines(number: int, run: TaskRun) -> list[str]:
    """One run's account: how it ended and where its transcript is, then what was checked and
    what was not allowed, each line with control characters made visible."""
    ended = f"run {number} {run.status}: ended {run.reason}; validation {run.verdict.validation}"
    if run.verdict.review_rejected:
        ended += f"; {len(run.verdict.review_rejected)} review rejected"
    lines = [f"{ended}; transcript {run.transcript or 'not kept'}"]
    if run.error:
        lines.append(f"  error: {run.error}")
    lines += [
        f"  {'✓' if check.passed else '✗'} {check.name} ({check.type}): {check.detail}"
        for check in run.checks
    ]
    lines += [f"  ✗ forbidden modification: {m.path} {m.change}" for m in run.forbidden]
    if not run.receipts.ok:
        lines.append(f"  ✗ receipts do not verify: {run.receipts.error}")
    lines += [f"  {line}" for line in not_done(run)]
    return [one_line(line) for line in lines]


def not_done(run: TaskRun) -> list[str]:
    """Each effect the package denied (`rejected`), the gate refused or that failed, and why."""
    found = []
    for effect in run.verdict.effects:
        if effect.state == "approved":
            continue
        what = "denied" if effect.state == "rejected" else effect.state
        target = effect.path or (shlex.join(effect.argv) if effect.argv else None)
        words = " ".join(word for word in (what, effect.tool, target) if word)
        found.append(f"{words}: {effect.reason}" if effect.reason else words)
    return found
