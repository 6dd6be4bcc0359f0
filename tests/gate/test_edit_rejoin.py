"""An edit whose `new` text runs on past its `old` text, copying the lines that follow as the
file has them, would leave those lines twice. When that breaks a file that parses, the edit is
read as replacing `old` through the lines where `new` rejoins the file, if the file then
parses: the person is asked that exact change, the receipt holds the widened `old`, and the
model is told where its edit ended. Anywhere else the edit is taken as written (or refused as
breaking the file, as before)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.workspaces import make_workspace

from counterfoil import ToolAction
from counterfoil.gate.approval import Approval
from counterfoil.gate.edit_rejoin import rejoined
from counterfoil.proposals import EditProposal
from counterfoil.receipts import ReceiptStore
from counterfoil.step_facts import BreaksFile

SETTINGS = (
    '{\n  "name": "fetcher",\n  "http": {\n    "timeout_seconds": 30,\n    "retries": 3\n  },\n'
    '  "cache": {\n    "timeout_seconds": 600\n  }\n}\n'
)
# What a small model wrote as `new` for the http block: the block changed, then the rest of
# the file copied as it is.
RAN_ON = (
    '  "http": {\n    "timeout_seconds": 90,\n    "retries": 3\n  },\n'
    '  "cache": {\n    "timeout_seconds": 600\n  }\n}\n'
)


def edit(path: str, old: str, new: str) -> ToolAction:
    return ToolAction("edit_file", {"path": path, "old": old, "new": new})


class Shown:
    """The person: keeps each proposal shown and approves it."""

    def __init__(self) -> None:
        self.proposals: list[EditProposal] = []

    def __call__(self, proposal: object) -> Approval:
        assert isinstance(proposal, EditProposal)
        self.proposals.append(proposal)
        return Approval(True)


def test_new_text_run_on_to_the_end_of_a_json_file_is_asked_as_the_change_once(
    tmp_path: Path,
) -> None:
    (tmp_path / "settings.json").write_text(SETTINGS)
    shown = Shown()
    store = ReceiptStore(tmp_path.parent / f"{tmp_path.name}-receipts.jsonl")
    workspace = make_workspace(tmp_path, allow_writes=True, confirm_proposal=shown, store=store)
    workspace.execute_step(ToolAction("read_file", {"path": "settings.json"}))

    step = workspace.execute_step(edit("settings.json", '  "http": {', RAN_ON))

    expected = SETTINGS.replace('"timeout_seconds": 30', '"timeout_seconds": 90')
    assert step.state == "approved"
    assert (tmp_path / "settings.json").read_text() == expected
    assert json.loads(expected)["cache"] == {"timeout_seconds": 600}
    [proposal] = shown.proposals
    assert proposal.proposed_text == expected and proposal.rejoined_through == 10
    assert proposal.action.arguments["old"] == SETTINGS[SETTINGS.index('  "http": {') :]
    assert "replaced through line 10" in step.observation
    receipt = store.get(step.call_id or "")
    assert receipt is not None and receipt.arguments["old"] == proposal.action.arguments["old"]


def test_an_edit_that_parses_as_written_is_taken_as_written(tmp_path: Path) -> None:
    source = "A = 1\nB = 2\nC = 3\n"
    (tmp_path / "consts.py").write_text(source)
    shown = Shown()
    workspace = make_workspace(tmp_path, allow_writes=True, confirm_proposal=shown)
    workspace.execute_step(ToolAction("read_file", {"path": "consts.py"}))

    step = workspace.execute_step(edit("consts.py", "A = 1\n", "A = 10\nB = 2\nC = 3\n"))

    assert step.state == "approved"
    assert (tmp_path / "consts.py").read_text() == "A = 10\nB = 2\nC = 3\nB = 2\nC = 3\n"
    assert shown.proposals[0].rejoined_through is None


def test_a_file_no_parser_checks_gets_the_edit_as_written(tmp_path: Path) -> None:
    text = "# tally\n\nUsage:\n\n    tally --verbose notes.txt\n\nPrints each line.\n"
    (tmp_path / "README.md").write_text(text)
    shown = Shown()
    workspace = make_workspace(tmp_path, allow_writes=True, confirm_proposal=shown)
    workspace.execute_step(ToolAction("read_file", {"path": "README.md"}))

    new = "Usage (flags):\n\n    tally --verbose notes.txt\n\nPrints each line.\n"
    step = workspace.execute_step(edit("README.md", "Usage:\n", new))

    assert step.state == "approved"
    assert (tmp_path / "README.md").read_text() == text.replace("Usage:\n", new)


def test_a_rejoined_reading_that_still_breaks_the_file_is_refused_as_breaking(
    tmp_path: Path,
) -> None:
    (tmp_path / "settings.json").write_text(SETTINGS)
    shown = Shown()
    workspace = make_workspace(tmp_path, allow_writes=True, confirm_proposal=shown)
    workspace.execute_step(ToolAction("read_file", {"path": "settings.json"}))

    broken = RAN_ON.replace('"timeout_seconds": 90,', '"timeout_seconds": 90,,')
    step = workspace.execute_step(edit("settings.json", '  "http": {', broken))

    assert step.state == "refused" and isinstance(step.detail, BreaksFile)
    assert shown.proposals == [] and (tmp_path / "settings.json").read_text() == SETTINGS


def test_the_run_of_the_files_lines_must_be_two_lines_found_once_after_old() -> None:
    text = "x = [\n    1,\n]\ny = [\n    1,\n]\n"
    # One shared line is not enough to say where the model's text rejoins the file.
    assert rejoined(text, "x = [\n", "x = [\n    2,\n]\n") is None
    # Lines the file holds twice after old: which run the model meant is not known.
    assert rejoined(text, "x = [\n", "x = [\n    2,\n    1,\n]\n") is None


def test_new_text_that_is_only_a_copy_of_later_lines_is_not_read_as_running_on() -> None:
    text = "a = 1\nb = 2\nc = 3\nd = 4\n"
    assert rejoined(text, "a = 1\n", "c = 3\nd = 4\n") is None


def test_the_widened_old_ends_where_the_files_line_ends() -> None:
    text = "first\nsecond\nthird\nfourth\n"
    found = rejoined(text, "first\n", "FIRST\nthird\nfourth\n")
    assert found is not None
    assert (found.old, found.text, found.through_line) == (text, "FIRST\nthird\nfourth\n", 4)
