"""The model a terminal command loads (`agent`, `resume`, `fork`): prepared, loaded with its
`loading model … ready in S s` line, or the exit status once the one-line reason is written."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from ..models.progress import ModelProgress
from ..settings.table import Settings
from .model_download import model_to_load
from .terminal import EXIT_INTERRUPTED, EXIT_SETUP_ERROR, timed_load


@dataclass(frozen=True)
class TerminalModel:
    """A loaded model (`generate`) and the spec it was loaded by (empty: a server's own)."""

    generate: Any
    spec: str


def load_terminal_model(
    args: argparse.Namespace,
    settings: Settings,
    stdout: TextIO,
    on_progress: Callable[[ModelProgress], None],
    should_stop: Callable[[], bool] | None = None,
) -> TerminalModel | int:
    """The model the settings name, loaded; `should_stop` ends a server's stream at the next
    token (a Ctrl-C), where the model streams from one."""
    from ..models import load_generate, streams_from_server

    model = model_to_load(args, settings, stdout)
    if isinstance(model, int):
        return model
    stop_hook = (
        {"should_stop": should_stop}
        if should_stop is not None and streams_from_server(model.options)
        else {}
    )
    try:
        generate = timed_load(
            stdout,
            model.shown,
            lambda: load_generate(model.spec, model.options, on_progress=on_progress, **stop_hook),
        )
    except KeyboardInterrupt:
        stdout.write("interrupted while loading the model\n")
        return EXIT_INTERRUPTED
    except ImportError as error:
        stdout.write(
            f"error: model {settings.model!r} needs the MLX extra "
            f"(pip install 'counterfoil[mlx]'): {error}\n"
        )
        return EXIT_SETUP_ERROR
    except Exception as error:  # noqa: BLE001 - any load failure is one line
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    return TerminalModel(generate, model.spec)
