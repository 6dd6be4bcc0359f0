"""`counterfoil eval PACKAGE... --model M [--model M2 …] [--runs N] [--json] [--report FILE]
[--transcripts DIR]`.

Every package is checked before any model loads, so a bad package costs nothing (exit 2, one
sentence). A package is data, but its commands and command checks are programs the person did
not write here: they run only confined (exit 2 where no sandbox can be had, unless
`--unconfined`), and its commands only after the person has seen them and said yes once
(`--yes` says it for CI). Progress goes to stderr as each run ends; the report (a table, or one
JSON document) goes to stdout. Exit 0 only when every task passed for every model, else 1
(130: Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from ..commands.tree.sandbox import CONFINE
from ..evals.confinement import command_sandbox
from ..evals.models import ModelUnderTest
from ..evals.package import PackageError, TaskPackage, load_package
from ..evals.report import TaskResult, document, one_line, overall_status
from ..evals.runner import TaskRun, run_task
from ..evals.table import table
from ..evals.transcripts import run_folder
from ..settings.checks import ENGINES
from ..settings.endpoints import SCHEMA_MODES
from ..settings.table import Settings, SettingsError
from ..tools import EDIT_FORMS
from .terminal_text import terminal_safe_stream

EXIT_PASSED, EXIT_FAILED, EXIT_BAD_PACKAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
MAX_RUNS = 1000
FLAG_NAMES = {
    "engine": "--engine",
    "endpoint": "--endpoint",
    "schemaMode": "--schema-mode",
    "contextTokens": "--context-tokens",
    "maxTokens": "--max-tokens",
    "readNamedFiles": "--read-named-files",
    "checkFinalAnswer": "--no-check-final-answer",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "packages", nargs="+", type=Path, metavar="PACKAGE", help="task package folders"
    )
    parser.add_argument(
        "--model",
        dest="models",
        action="append",
        required=True,
        metavar="M",
        help="a model as for `agent --model`, or NAME@URL for a model server (repeatable: "
        "one report per model); scripted:FOLDER replays FOLDER/<task id>.jsonl",
    )
    parser.add_argument(
        "--runs", type=int, default=1, metavar="N", help="runs per task (default 1)"
    )
    parser.add_argument(
        "--engine",
        default=None,
        choices=ENGINES,
        help="how every local model runs: mlx, or llama.cpp for a .gguf file (as for `agent`)",
    )
    server = parser.add_argument_group("model server (as `agent` takes them)")
    server.add_argument(
        "--endpoint", default=None, help="the model server for every --model without @URL"
    )
    server.add_argument("--schema-mode", default=None, choices=SCHEMA_MODES)
    server.add_argument("--context-tokens", type=int, default=None, metavar="N")
    server.add_argument("--max-tokens", type=int, default=None, metavar="N")
    agent = parser.add_argument_group("the agent (as `agent` takes them)")
    agent.add_argument(
        "--read-named-files",
        action="store_const",
        const=True,
        default=None,
        help="read the model the short files the task names before its first step",
    )
    agent.add_argument(
        "--no-check-final-answer",
        dest="check_final_answer",
        action="store_const",
        const=False,
        default=None,
        help="end each run at the model's final answer without checking it against the record",
    )
    agent.add_argument(
        "--edit-form",
        default=None,
        choices=tuple(EDIT_FORMS),
        help="how the model edits part of a file: replace (old and new text) or diff (a hunk)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--report", type=Path, metavar="FILE", help="also write an HTML report")
    parser.add_argument(
        "--transcripts",
        type=Path,
        metavar="DIR",
        help="keep each run's transcript and receipt log in DIR/<model number>-<task>-<run> "
        "(default: a new folder in the temporary directory)",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="run the packages' commands without asking (they are printed first; for CI)",
    )
    parser.add_argument(
        "--unconfined",
        action="store_true",
        help="run the packages' commands without a sandbox where none can be had (they then "
        "reach everything you can)",
    )


def eval_command(
    args: argparse.Namespace,
    stdout: TextIO,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    stderr = terminal_safe_stream(stderr or sys.stderr)
    if not 0 < args.runs <= MAX_RUNS:
        stdout.write(f"error: --runs must be from 1 to {MAX_RUNS}\n")
        return EXIT_BAD_PACKAGE
    try:
        packages = [load_package(path) for path in args.packages]
    except PackageError as error:
        stdout.write(f"error: {error}\n")
        return EXIT_BAD_PACKAGE
    ids = [package.id for package in packages]
    duplicate = next((task for task in ids if ids.count(task) > 1), None)
    if duplicate is not None:
        stdout.write(f"error: two packages have the task id {duplicate!r}\n")
        return EXIT_BAD_PACKAGE
    sandbox, refusal = command_sandbox(packages, args.unconfined)
    if refusal is not None:
        refusal += "; pass --unconfined to run them without one"
    elif any(package.allowed_commands for package in packages):
        refusal = _consent(packages, sandbox, args.yes, stdin or sys.stdin, stderr)
    if refusal is not None:
        stdout.write(f"error: {refusal}\n")
        return EXIT_BAD_PACKAGE
    models = list(dict.fromkeys(args.models))
    overrides = {
        key: value
        for key, value in (
            ("engine", args.engine),
            ("endpoint", args.endpoint),
            ("schemaMode", args.schema_mode),
            ("contextTokens", args.context_tokens),
            ("maxTokens", args.max_tokens),
            ("readNamedFiles", args.read_named_files),
            ("checkFinalAnswer", args.check_final_answer),
            ("editForm", args.edit_form),
        )
        if value is not None
    }
    try:
        Settings.from_mapping(overrides, names=FLAG_NAMES)
    except SettingsError as error:
        stdout.write(f"error: {error}\n")
        return EXIT_BAD_PACKAGE
    under_test = [ModelUnderTest(spec, dict(overrides)) for spec in models]
    try:
        transcripts = args.transcripts or Path(tempfile.mkdtemp(prefix="counterfoil-eval-"))
        transcripts = transcripts.absolute()  # the report links to it from anywhere
        transcripts.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        stdout.write(f"error: could not make the transcripts folder: {error}\n")
        return EXIT_BAD_PACKAGE
    stderr.write(f"transcripts in {transcripts}\n")
    try:
        results = evaluate(packages, under_test, args.runs, stderr, sandbox, transcripts)
    except KeyboardInterrupt:
        stdout.write("interrupted: no report\n")
        return EXIT_INTERRUPTED
    if args.json:
        stdout.write(json.dumps(document(results, models, args.runs), indent=2) + "\n")
    else:
        stdout.write(table(results, models))
    if args.report is not None:
        from ..evals.html import html_report

        try:
            args.report.write_text(html_report(results, models, args.runs), encoding="utf-8")
        except OSError as error:
            stdout.write(f"error: could not write the report {args.report}: {error.strerror}\n")
            return EXIT_FAILED
        stderr.write(f"report written to {args.report}\n")
    return EXIT_PASSED if overall_status(results) == "passed" else EXIT_FAILED


def _consent(
    packages: list[TaskPackage], sandbox: str, yes: bool, stdin: TextIO, stderr: TextIO
) -> str | None:
    """Show every command the packages let a model run and ask once; why not, or None."""
    where = "confined to each run's copy" if sandbox == CONFINE else "UNCONFINED, as you"
    stderr.write(f"The packages let the model run these commands ({where}):\n")
    for package in packages:
        stderr.writelines(
            f"  {package.id}: {one_line(shlex.join(argv))}\n" for argv in package.allowed_commands
        )
    if yes:
        stderr.write("(--yes: running them when the model asks)\n")
        return None
    if not _is_terminal(stdin):
        return "the packages' commands need your yes: run on a terminal, or pass --yes"
    stderr.write("Run the evaluation? [y/N] ")
    stderr.flush()
    from .approvals import read_line

    if read_line(stdin).strip().lower() not in ("y", "yes"):
        return "not evaluated: the packages' commands were not approved"
    return None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def evaluate(
    packages: list[TaskPackage],
    models: list[ModelUnderTest],
    runs: int,
    progress: TextIO,
    sandbox: str = CONFINE,
    transcripts: Path | None = None,
) -> list[TaskResult]:
    """Every package, `runs` times, with each model in turn; a model that cannot be loaded
    makes each of its runs an error, and the rest still run. The packages' commands run in
    `sandbox`, which hides every package of the evaluation from them. Each run's transcript is
    kept under `transcripts` (None: none kept)."""
    hidden = tuple(package.source for package in packages)
    results: list[TaskResult] = []
    total = len(packages) * runs
    for model_number, model in enumerate(models, 1):
        done = 0
        for package in packages:
            task_runs: list[TaskRun] = []
            for run_number in range(1, runs + 1):
                started = time.perf_counter()
                keep_in = (
                    None
                    if transcripts is None
                    else run_folder(transcripts, model_number, package.id, run_number)
                )
                task_runs.append(_one_run(package, model, sandbox, hidden, keep_in))
                done += 1
                run = task_runs[-1]
                progress.write(
                    f"[{model_number}/{len(models)} {model.spec}] {done}/{total} {package.id}: "
                    f"{run.status} ({time.perf_counter() - started:.2f} s)\n"
                )
                progress.flush()
            results.append(
                TaskResult(
                    model.spec,
                    package.id,
                    str(package.source),
                    tuple(task_runs),
                    model.identity(),
                )
            )
    return results


def _one_run(
    package: TaskPackage,
    model: ModelUnderTest,
    sandbox: str,
    hidden: tuple[Path, ...],
    keep_in: Path | None,
) -> TaskRun:
    try:
        generate, limits = model.generate_for(package.id)
    except Exception as error:  # noqa: BLE001 - a model that cannot load is an error result
        return TaskRun(package.id, "error", "model_not_loaded", error=f"{error}")
    try:
        return run_task(
            package,
            generate,
            limits=limits,
            sandbox=sandbox,
            hidden=hidden,
            keep_in=keep_in,
            edit_form=model.edit_form,
        )
    except Exception as error:  # noqa: BLE001 - one run that cannot be judged loses no other
        return TaskRun(package.id, "error", "not_judged", error=f"{type(error).__name__}: {error}")
