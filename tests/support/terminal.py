"""The terminal in a test: `counterfoil ARGUMENTS` run in this process, its prompts answered
from text (or from a stream that answers in turn), and what it printed with its exit status."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TextIO

from counterfoil.cli.main import main


def run_cli(arguments: Sequence[str], answers: str | TextIO = "") -> tuple[int, str]:
    output = io.StringIO()
    stdin = io.StringIO(answers) if isinstance(answers, str) else answers
    status = main(list(arguments), stdin=stdin, stdout=output)
    return status, output.getvalue()
