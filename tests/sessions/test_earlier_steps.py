"""A resumed run's earlier steps come from the run's record: which message is a step's
observation is the record's `Observation`, never a guess from the message's words."""

from __future__ import annotations

import json

from counterfoil.context.budget import OBSERVATION_PREFIX, Observation
from counterfoil.sessions.earlier_steps import earlier_steps

READ = json.dumps({"tool": "read_file", "path": "app.py"})
RESULT = OBSERVATION_PREFIX + "print('hi')"


def conversation(*turns: str) -> list[tuple[str, str]]:
    messages = [("system", "prompt"), ("user", "fix app.py")]
    roles = ("assistant", "user")
    return messages + [(roles[index % 2], text) for index, text in enumerate(turns)]


def test_a_steps_observation_is_the_message_the_record_names() -> None:
    (step,) = earlier_steps(conversation(READ, RESULT), [Observation(3, None, len(RESULT))])

    assert (step.step, step.action is not None, step.observation) == (1, True, "print('hi')")


def test_a_message_the_record_does_not_name_is_no_observation_whatever_its_words() -> None:
    (step,) = earlier_steps(conversation(READ, RESULT), [])

    assert step.observation is None


def test_what_follows_a_final_answer_is_not_its_observation_even_when_recorded() -> None:
    note = "your final answer repeats the task word for word"
    final = json.dumps({"final": "done"})

    (step,) = earlier_steps(conversation(final, note), [Observation(3, None, len(note))])

    assert step.observation is None


def test_an_observation_compacted_to_its_receipts_record_is_not_retold() -> None:
    record = Observation(3, "Completed tool interaction", len(RESULT), True, compacted=True)

    (step,) = earlier_steps(conversation(READ, "Completed tool interaction"), [record])

    assert step.observation is None


def test_an_elided_read_is_retold_as_the_line_the_model_now_reads() -> None:
    elided = OBSERVATION_PREFIX + "[read_file app.py: elided]"
    record = Observation(3, elided, len(RESULT), True)

    (step,) = earlier_steps(conversation(READ, elided), [record])

    assert step.observation == "[read_file app.py: elided]"
