"""The HTML report of an evaluation: one self-contained page, a bar chart in inline SVG comparing
each model's pass rate per task and overall, and the table of every run.

No script and no remote resource (its Content-Security-Policy allows only inline styles), so
it opens the same offline, attached to a message or in a browser that blocks everything.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from .report import TaskResult, one_line, summarize, total_cost
from .table import cost_line, run_lines

COLOURS = ("#3b6ea8", "#c8702a", "#4a9a5b", "#9b4f96", "#8c7a3a", "#2f8f8f")
STATUS_COLOURS = {
    "passed": "#2e7d32",
    "failed": "#c62828",
    "error": "#6d4c41",
    "not_run": "#757575",
}
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.detail { color: #555; font-size: 12px; }
"""


def html_report(results: list[TaskResult], models: list[str], runs: int) -> str:
    tasks = list(dict.fromkeys(result.task for result in results))
    summaries = [summarize(model, [r for r in results if r.model == model]) for model in models]
    legend = "".join(
        f'<li><span style="color:{COLOURS[index % len(COLOURS)]}">■</span> {escape(model)}: '
        + (
            f"not run: {escape(one_line(summary.not_run))}"
            if summary.not_run is not None
            else f"{summary.pass_rate:.0%} (spread ±{summary.stdev:.0%}); "
            f"{escape(cost_line(summary.cost))}"
        )
        + "</li>"
        for index, (model, summary) in enumerate(zip(models, summaries, strict=True))
    )
    rows = "".join(_rows(result) for result in results)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>counterfoil eval</title><style>{STYLE}</style></head><body>"
        f"<h1>counterfoil eval</h1><p>{len(tasks)} task(s), {runs} run(s) each, "
        f"{len(models)} model(s).</p><ul>{legend}</ul>"
        f"{_chart(results, models, tasks)}"
        "<table><tr><th>model</th><th>task</th><th>status</th><th>passed</th>"
        "<th>prompt tokens</th><th>generated tokens</th><th>prefill avoided</th><th>seconds</th>"
        f"<th>each run</th></tr>{rows}</table></body></html>\n"
    )


def _chart(results: list[TaskResult], models: list[str], tasks: list[str]) -> str:
    """Grouped bars: one group per task and one for all tasks, one bar per model."""
    groups = [*tasks, "all tasks"]
    bar, gap, height, top, left = 18, 24, 160, 20, 40
    group_width = bar * len(models) + gap
    width = left + group_width * len(groups) + gap
    parts = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{top + height + 90}" role="img" aria-label="pass rate by task and model">'
        )
    ]
    for percent in (0, 50, 100):
        y = top + height - height * percent / 100
        parts.append(
            f'<line x1="{left}" x2="{width}" y1="{y}" y2="{y}" stroke="#ddd"/>'
            f'<text x="{left - 6}" y="{y + 4}" font-size="11" text-anchor="end">{percent}%</text>'
        )
    for group_index, group in enumerate(groups):
        x0 = left + gap + group_index * group_width
        for model_index, model in enumerate(models):
            mine = [r for r in results if r.model == model]
            if summarize(model, mine).not_run is not None:
                continue  # no bar: a model that ran nothing has no rate, not a rate of 0%
            if group == "all tasks":
                rate = summarize(model, mine).pass_rate
            else:
                rate = next((r.pass_rate for r in mine if r.task == group), 0.0)
            bar_height = height * rate
            x = x0 + model_index * bar
            parts.append(
                f'<rect x="{x}" y="{top + height - bar_height}" width="{bar - 2}" '
                f'height="{bar_height}" fill="{COLOURS[model_index % len(COLOURS)]}">'
                f"<title>{escape(model)} · {escape(group)}: {rate:.0%}</title></rect>"
                f'<text x="{x + (bar - 2) / 2}" y="{top + height - bar_height - 3}" '
                f'font-size="9" text-anchor="middle">{rate:.0%}</text>'
            )
        label_x = x0 + (bar * len(models)) / 2
        parts.append(
            f'<text x="{label_x}" y="{top + height + 14}" font-size="11" text-anchor="end" '
            f'transform="rotate(-30 {label_x} {top + height + 14})">{escape(group)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _rows(result: TaskResult) -> str:
    runs = "".join(
        f"<li>{_transcript_link(run.transcript)}"
        + "<br>".join(escape(line) for line in run_lines(number, run))
        + "</li>"
        for number, run in enumerate(result.runs, 1)
    )
    cost = total_cost(list(result.runs))
    colour = STATUS_COLOURS[result.status]
    cells = (
        "-" if cost.prompt_tokens is None else f"{cost.prompt_tokens:,}",
        "-" if cost.generated_tokens is None else f"{cost.generated_tokens:,}",
        "-" if cost.prefill_avoided is None else f"{cost.prefill_avoided:,}",
        f"{cost.seconds:.2f}",
    )
    return (
        f"<tr><td>{escape(result.model)}</td><td>{escape(result.task)}</td>"
        f'<td style="color:{colour}">{result.status}</td>'
        f"<td>{result.passed_runs}/{len(result.runs)}</td>"
        + "".join(f"<td>{cell}</td>" for cell in cells)
        + f'<td class="detail"><ol>{runs}</ol></td></tr>'
    )


def _transcript_link(transcript: str | None) -> str:
    if transcript is None:
        return ""
    return f'<a href="{escape(Path(transcript).as_uri())}">transcript</a> '
