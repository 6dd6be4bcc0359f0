"""`counterfoil eval` with a real MLX model: loaded once, and its token counts in the metrics."""

from __future__ import annotations

import io
import json
from pathlib import Path

from counterfoil.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evals"


def test_an_mlx_model_reports_its_tokens_for_every_run(tiny_model_spec: str) -> None:
    stdout = io.StringIO()

    status = main(
        [
            "eval",
            str(FIXTURES / "localized-constant"),
            "--model",
            tiny_model_spec,
            "--runs",
            "2",
            "--json",
        ],
        stdout=stdout,
    )
    runs = json.loads(stdout.getvalue())["tasks"][0]["runs"]

    assert status in (0, 1)
    assert [run["status"] in ("passed", "failed") for run in runs] == [True, True]
    for run in runs:
        metrics = run["metrics"]
        assert metrics["steps"] >= 1
        assert metrics["prompt_tokens"] > 0
        assert metrics["generated_tokens"] > 0
        assert 0 <= metrics["prefilled_tokens"] <= metrics["prompt_tokens"]
