"""The terminal with a real (tiny, offline) MLX model: streamed steps and their speed."""

from __future__ import annotations

import io
import re
from pathlib import Path

from counterfoil.cli.main import main


def test_each_streamed_step_has_its_header_first_and_its_speed_after(
    tiny_model_spec: str, demo_project: Path
) -> None:
    output = io.StringIO()
    status = main(
        [
            "agent",
            "fix app.py",
            "--root",
            str(demo_project),
            "--model",
            tiny_model_spec,
            "--max-steps",
            "2",
            "--max-tokens",
            "24",
        ],
        stdin=io.StringIO("n\nn\n"),
        stdout=output,
    )
    text = output.getvalue()

    assert status in (0, 1, 3)
    assert re.search(r"^loading model \S+ … ready in \d+\.\d s$", text, re.MULTILINE)
    speeds = re.findall(
        r"^\(\d+ tokens in \d+\.\d s(?:, \d+\.\d tokens/s)?(?:; prefill [\d,]+ tokens in \d+\.\d s)?\)$",
        text,
        re.MULTILINE,
    )
    steps = re.findall(r"^== step \d ==$", text, re.MULTILINE)
    assert len(speeds) == len(steps) >= 1
    assert text.index("== step 1 ==") < text.index(speeds[0])
    assert not re.search(r"^final answer", text, re.MULTILINE) and "\nresponse:" not in text
    assert "None" not in text.split("== verdict ==", 1)[1]
