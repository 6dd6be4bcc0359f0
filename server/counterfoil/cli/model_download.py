"""Model downloads on the terminal: `counterfoil download MODEL`, and the one before a run.

A download is shown as one line that rewrites itself on a terminal (one line per tenth when
the output is a file or a pipe); Ctrl-C stops it and keeps what arrived, so the same command
resumes. Before `counterfoil agent` loads a hub model that is not on disk it says how much it
will fetch and fetches it this way; the person named the model, so it does not ask.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..models.engine_choice import choose_engine
from ..models.errors import ModelLoadError
from ..models.hub.download import (
    DownloadCancelled,
    DownloadPlan,
    DownloadProgress,
    ModelDownloadError,
    download_model,
    format_progress,
    format_size,
    hub_repo,
    local_snapshot,
    model_on_disk,
    plan_download,
)
from ..models.runtime import missing_runtime
from ..settings.table import Settings

if TYPE_CHECKING:
    from ..models import GenerationOptions

INTERRUPTED = 130


class TerminalProgress:
    """Writes download reports as a rewriting line (a terminal) or a line per tenth (a file)."""

    def __init__(self, stdout: TextIO) -> None:
        self.stdout = stdout
        self.rewrite = bool(getattr(stdout, "isatty", lambda: False)())
        self.tenths_shown = -1
        self.width = 0

    def __call__(self, progress: DownloadProgress) -> None:
        line = format_progress(progress)
        if self.rewrite:
            self.stdout.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            tenths = int(progress.fraction * 10)
            if tenths == self.tenths_shown:
                return
            self.tenths_shown = tenths
            self.stdout.write(line + "\n")
        self.stdout.flush()

    def end(self) -> None:
        if self.rewrite and self.width:
            self.stdout.write("\n")
            self.width = 0


def describe_plan(plan: DownloadPlan) -> str:
    already = plan.total_bytes - plan.missing_bytes
    resumed = f" ({format_size(already)} already here)" if already else ""
    return (
        f"model {plan.spec} ({plan.repo_id}) is not on disk: downloading "
        f"{format_size(plan.missing_bytes)} of {format_size(plan.total_bytes)}{resumed}"
    )


def fetch_model(spec: str, stdout: TextIO, *, cache_dir: str | Path | None = None) -> int:
    """Download `spec` if it is not on disk; 0 when it is there, 2 on an error, 130 on Ctrl-C."""
    try:
        plan = plan_download(spec, cache_dir=cache_dir)
    except ModelLoadError as error:
        stdout.write(f"error: {error}\n")
        return 2
    if plan.missing_bytes == 0 and all(file.on_disk for file in plan.files):
        stdout.write(
            f"model {spec} is on disk: {local_snapshot(plan.repo_id, cache_dir=cache_dir)}\n"
        )
        return 0
    stdout.write(describe_plan(plan) + "\n")
    stdout.flush()
    progress = TerminalProgress(stdout)
    try:
        folder = download_model(spec, cache_dir=cache_dir, on_progress=progress, plan=plan)
    except (KeyboardInterrupt, DownloadCancelled):
        progress.end()
        stdout.write("download stopped; what arrived is kept: run it again to resume\n")
        return INTERRUPTED
    except ModelDownloadError as error:
        progress.end()
        stdout.write(f"error: {error}\n")
        return 2
    progress.end()
    stdout.write(f"model {spec} is on disk: {folder}\n")
    return 0


def download_command(spec: str, stdout: TextIO) -> int:
    """`counterfoil download MODEL`: fetch a hub model now, so the first run does not wait."""
    try:
        repo = hub_repo(spec)
    except ModelLoadError as error:
        stdout.write(f"error: {error}\n")
        return 2
    if repo is None:
        stdout.write(f"model {spec} is not on the hub: nothing to download\n")
        return 0
    status = fetch_model(spec, stdout)
    need = missing_runtime(spec)
    if status == 0 and need is not None:
        stdout.write(f"note: {need.message}\n")
    return status


def prepare_model(
    spec: str, stdout: TextIO, *, endpoint: str | None = None, engine: str = "mlx"
) -> int | None:
    """Before a run: the runtime is installed and the weights are on disk, or an exit status."""
    need = missing_runtime(spec, endpoint=endpoint, engine=engine)
    if need is not None:
        stdout.write(f"error: {need.message}\n")
        return 2
    if endpoint:
        return None
    try:
        if model_on_disk(spec):
            return None
    except ModelLoadError:
        return None  # the model loader says what is wrong with the name
    status = fetch_model(spec, stdout)
    return None if status == 0 else status


@dataclass(frozen=True)
class ModelToLoad:
    """What a run loads, how the terminal names it, and with which options."""

    spec: str
    shown: str
    options: GenerationOptions


def model_to_load(
    args: argparse.Namespace, settings: Settings, stdout: TextIO
) -> ModelToLoad | int:
    """The model a run loads, once its runtime and weights are there (`prepare_model`), or the
    exit status once the reason is written. A served model asked for without `--model` is
    loaded by an empty spec (the server's own model)."""
    from ..models import GenerationOptions

    choice = choose_engine(settings.model, settings.engine, endpoint=settings.endpoint)
    if choice is not None:  # the header says which engine and why
        stdout.write(choice.line + "\n")
    prepared = prepare_model(
        settings.model, stdout, endpoint=settings.endpoint, engine=settings.engine
    )
    if prepared is not None:
        return prepared
    options = replace(
        GenerationOptions.from_settings(settings),
        enable_thinking=args.enable_thinking,
        device=args.device,
    )
    spec = "" if settings.endpoint and args.model is None else settings.model
    shown = f"{spec or 'the served model'} at {settings.endpoint}" if settings.endpoint else spec
    return ModelToLoad(spec, shown, options)
