"""What the context layer says of a step is built from the step's record, never cut out of the
observation's text: a search's lines from its `SearchHits`, a command's status line from how
its effect ended."""

from __future__ import annotations

import pytest

from counterfoil.actions import ToolAction
from counterfoil.commands.runner import CommandResult, status_line
from counterfoil.context.budget import elided_summary
from counterfoil.step_facts import SearchHits
from counterfoil.steps import StepResult

SEARCH = ToolAction("search_files", {"pattern": "def"})


def test_an_elided_search_counts_the_lines_its_record_found_not_its_texts_lines() -> None:
    step = StepResult("text worded any way at all", search=SearchHits(3, complete=True))

    assert elided_summary(SEARCH, step) == "[search_files 'def' in .: 3 lines elided]"


def test_an_elided_search_that_stopped_early_counts_the_line_saying_where() -> None:
    step = StepResult("", search=SearchHits(2, complete=False))

    assert elided_summary(SEARCH, step) == "[search_files 'def' in .: 3 lines elided]"


def test_an_elided_search_that_found_nothing_counts_the_line_saying_so() -> None:
    step = StepResult("", search=SearchHits(0, complete=True))

    assert elided_summary(SEARCH, step) == "[search_files 'def' in .: 1 lines elided]"


@pytest.mark.parametrize(
    "ended",
    [
        CommandResult(0, "x"),
        CommandResult(2, "x"),
        CommandResult(None, "x"),  # timed out
        CommandResult(None, "x", terminated=True),
    ],
)
def test_a_commands_status_line_is_built_from_how_it_ended(ended: CommandResult) -> None:
    line = status_line(ended.status, ended.timed_out)

    assert ended.observation().startswith(line)
    assert line.count("\n") == 1 and line.endswith("\n")
