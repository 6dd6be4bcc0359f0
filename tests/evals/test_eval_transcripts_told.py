"""A kept transcript shows what the model read, not only the course's observation."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import run_agent
from counterfoil.evals.transcripts import keep_transcript


def test_a_refusal_the_model_was_told_more_of_keeps_both_texts(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "answer.py").write_text("ANSWER = 41\n")
    model = RecordingModel('{"tool":"read_file","path":"app.py"}', '{"final":"done"}')
    run = run_agent("fix it", model, make_workspace(root))

    path = keep_transcript(tmp_path / "kept", "fix it", run, tmp_path / "no-log")

    step = json.loads(path.read_text().splitlines()[1])
    assert step["observation"] == "error: path is not accessible"
    assert step["told"] == "error: no such file: app.py; nearby: answer.py"
