"""The context window holds across follow-ups: the daemon keeps which messages are
observations with the conversation, so a follow-up elides earlier turns' reads by the same
rule, while the events and the run panel keep every observation whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.recording_model import RecordingModel

from counterfoil.lsp.model_service import model_host
from counterfoil.lsp.session import EVENT_METHOD, Session
from counterfoil.protocol import FollowUpParams, RunParams, wire
from counterfoil.settings.table import Settings

from .conftest import RecordingChannel, script

GOAL = "read mod_00.py and mod_01.py"
FOLLOW_UP = "now read the other two"


def module_text(index: int) -> str:
    return "".join(
        f"def f_{index}_{n:02}(x):\n    return x + {n}  # {'.' * 40}\n" for n in range(20)
    )


def read(index: int) -> str:
    return f'{{"tool":"read_file","path":"mod_{index:02}.py"}}'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for index in range(4):
        (root / f"mod_{index:02}.py").write_text(module_text(index), encoding="utf-8")
    return root


def session_with(
    project: Path, model: RecordingModel, monkeypatch: pytest.MonkeyPatch, **settings: object
) -> tuple[Session, RecordingChannel]:
    monkeypatch.setattr(model_host, "load_generate", lambda spec, options, on_progress: model)
    channel = RecordingChannel()
    session = Session(channel)  # type: ignore[arg-type]
    session.root = project
    unused = script(project.parent / "unused.jsonl", {"final": "-"})
    session.settings = Settings(model=unused, **settings)  # type: ignore[arg-type]
    return session, channel


def two_turns(
    project: Path, monkeypatch: pytest.MonkeyPatch, context_tokens: int
) -> tuple[RecordingModel, dict[str, Any], dict[str, Any], RecordingChannel]:
    """Two reads (the step limit), then a follow-up of two more reads and an answer."""
    model = RecordingModel(read(0), read(1), read(2), read(3), '{"final":"read all four"}')
    session, channel = session_with(
        project, model, monkeypatch, context_tokens=context_tokens, max_steps=2
    )
    first = wire(session.operations.run(RunParams(goal=GOAL)).result.result(timeout=30))
    session.settings = Settings(
        model=session.settings.model, context_tokens=context_tokens, max_steps=3
    )
    second = wire(
        session.operations.follow_up(FollowUpParams(text=FOLLOW_UP)).result.result(timeout=30)
    )
    return model, first, second, channel


def test_a_follow_up_elides_earlier_reads_in_the_models_view(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, first, second, _ = two_turns(project, monkeypatch, context_tokens=1_400)

    assert first["reason"] == "step_limit"
    assert second["reason"] == "completed"
    last = model.calls[-1]
    assert last[1] == {"role": "user", "content": GOAL}
    assert last[3]["content"] == "Tool result:\n[read_file mod_00.py: elided]"
    assert last[5]["content"] == f"Tool result:\n[read_file mod_01.py: elided]\n\n{FOLLOW_UP}"
    assert last[-3]["content"] == "Tool result:\n" + module_text(2)
    assert last[-1]["content"] == "Tool result:\n" + module_text(3)


def test_the_events_of_both_turns_keep_every_observation_whole(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, first, second, channel = two_turns(project, monkeypatch, context_tokens=1_400)

    assert [e["result"] for e in channel.steps(first)] == [module_text(0), module_text(1)]
    assert [e["result"] for e in channel.steps(second)[:2]] == [module_text(2), module_text(3)]
    told = [params["result"] for method, params in channel.notifications if method == EVENT_METHOD]
    assert told[:4] == [module_text(index) for index in range(4)]
    assert not any("elided]" in (result or "") for result in told)


def test_without_room_for_the_follow_up_the_run_ends_at_the_context_limit(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same conversation in a window too small even after elision ends as it should."""
    _, first, second, _ = two_turns(project, monkeypatch, context_tokens=900)
    assert first["reason"] == "step_limit"
    assert second["reason"] == "context_limit"
