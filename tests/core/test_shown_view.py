"""The workspace view the loop gives the model each turn: what the overview, the listings and
the reads so far have shown, so the next action's grammar is built from it."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_workspace_view import edit, expressible
from tests.support.workspaces import make_workspace

from counterfoil import run_agent
from counterfoil.models import ScriptedModel
from counterfoil.tools import action_schema
from counterfoil.workspace_view import WorkspaceView

MODULE = "def double(x):\n    return x + x\n"
READ = '{"tool":"read_file","path":"app.py"}'
FINAL = '{"final":"done"}'


class ViewRecordingModel(ScriptedModel):
    """A scripted model that keeps each view `run_agent` gives it."""

    def __init__(self, responses: list[str]) -> None:
        super().__init__(responses)
        self.views: list[WorkspaceView | None] = []

    def configure_tools(
        self,
        available_tools: frozenset[str],
        allowed_commands: object,
        mcp_tools: object = None,
        view: WorkspaceView | None = None,
    ) -> None:
        self.views.append(view)


def views_of(tmp_path: Path, responses: list[str], **policy: object) -> list[WorkspaceView]:
    model = ViewRecordingModel(responses)
    run_agent("change app.py", model, make_workspace(tmp_path, allow_writes=True, **policy))
    assert all(view is not None for view in model.views)
    return [view for view in model.views if view is not None]


def test_the_loop_offers_an_edit_of_a_file_once_it_is_read(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(MODULE)
    before, after = views_of(tmp_path, [READ, FINAL])
    tools = frozenset({"read_file", "list_files", "write_file", "edit_file"})
    change = edit("app.py", "    return x + x", "    return 2 * x")
    assert not expressible(action_schema(tools, (), view=before), change)
    assert expressible(action_schema(tools, (), view=after), change)


def test_a_ranged_read_shows_only_its_lines(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(MODULE)
    ranged = '{"tool":"read_file","path":"app.py","start_line":2,"end_line":2}'
    _, after = views_of(tmp_path, [ranged, FINAL])
    [read] = after.reads
    assert (read.path, read.shown) == ("app.py", (2, 2))


def test_a_listing_shows_the_files_of_a_folded_folder(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    for number in range(60):
        (tmp_path / "lib" / f"part_{number}.py").write_text("")
    before, after = views_of(tmp_path, ['{"tool":"list_files","path":"lib"}', FINAL])
    assert "lib" in before.folders and "lib/part_7.py" not in before.files
    assert "lib/part_7.py" in after.files


def views_around_a_change_on_disk(tmp_path: Path) -> tuple[WorkspaceView, WorkspaceView]:
    """The views after a read of app.py and after a listing, app.py changed on disk between."""
    (tmp_path / "app.py").write_text(MODULE)

    class ChangingModel(ViewRecordingModel):
        """Changes app.py on disk while it answers its second call."""

        def __call__(self, messages: list[dict[str, str]]) -> str:
            if len(self.views) == 2:
                (tmp_path / "app.py").write_text("changed\n")
            return super().__call__(messages)

    model = ChangingModel([READ, '{"tool":"list_files"}', FINAL])
    run_agent("change app.py", model, make_workspace(tmp_path, allow_writes=True))
    _, read, changed = model.views
    assert read is not None and changed is not None
    return read, changed


def test_a_file_changed_since_it_was_read_is_not_offered_for_an_edit(tmp_path: Path) -> None:
    read, changed = views_around_a_change_on_disk(tmp_path)
    assert [item.path for item in read.reads] == ["app.py"]
    assert changed.reads == ()


def test_an_old_text_sent_back_as_its_own_new_is_not_offered_again(tmp_path: Path) -> None:
    """The 1.5B sent an edit whose new text was its old one, was refused, and sent it again
    to the step limit: the grammar offers that old text no more, and the file's other lines
    still."""
    (tmp_path / "app.py").write_text(MODULE)
    same = (
        '{"tool":"edit_file","path":"./app.py","old":"    return x + x","new":"    return x + x"}'
    )
    _, before, after = views_of(tmp_path, [READ, same, FINAL], answer=True)
    tools = frozenset({"read_file", "list_files", "write_file", "edit_file"})
    change = edit("app.py", "    return x + x", "    return 2 * x")
    assert expressible(action_schema(tools, (), view=before), change)
    assert not expressible(action_schema(tools, (), view=after), change)
    assert expressible(action_schema(tools, (), view=after), edit("app.py", "def double(x):"))
    assert (tmp_path / "app.py").read_text() == MODULE


def test_a_search_shows_the_files_it_looked_in(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    for number in range(60):
        (tmp_path / "lib" / f"part_{number}.py").write_text(f"value = {number}\n")
    search = '{"tool":"search_files","pattern":"value = 7","path":"lib"}'
    _, after = views_of(tmp_path, [search, FINAL], allow_search=True)
    assert "lib/part_7.py" in after.files


def test_a_task_that_may_change_one_file_is_offered_edits_and_new_files_there_only(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(MODULE)
    (tmp_path / "notes.md").write_text("# Notes\n")
    read_notes = '{"tool":"read_file","path":"notes.md"}'
    _, _, after = views_of(tmp_path, [READ, read_notes, FINAL], editable_paths=("app.py",))
    assert [read.path for read in after.reads] == ["app.py"]
    assert after.new_files_under == ("app.py",)


def test_a_file_read_whole_is_not_read_again_until_its_bytes_change(tmp_path: Path) -> None:
    """The 1.5B read two files, ran the test, then read both again to the step limit."""
    (tmp_path / "app.py").write_text(MODULE)
    write = '{"tool":"write_file","path":"app.py","content":"def double(x):\\n    return 2 * x\\n"}'
    ranged = '{"tool":"read_file","path":"app.py","start_line":1,"end_line":1}'
    before, after_read, after_ranged, after_write = views_of(
        tmp_path, [READ, ranged, write, FINAL], answer=True
    )
    assert before.shown_whole == () and after_read.shown_whole == ("app.py",)
    assert after_ranged.shown_whole == ("app.py",)
    assert after_write.shown_whole == ()


def test_a_file_changed_on_disk_since_its_read_may_be_read_again(tmp_path: Path) -> None:
    read, changed = views_around_a_change_on_disk(tmp_path)
    assert read.shown_whole == ("app.py",)
    assert changed.shown_whole == ()


def test_no_change_is_offered_until_the_file_the_task_refers_to_by_its_kind_is_read(
    tmp_path: Path,
) -> None:
    """The 1.5B, held for not reading "the project's JSON defaults" and given the read as its
    next call, edited the constant with its old value instead: the read comes first."""
    (tmp_path / "client.py").write_text("DEFAULT_RETRIES = 2\n")
    (tmp_path / "defaults.json").write_text('{"retries": 5}\n')
    task = (
        "DEFAULT_RETRIES in client.py must equal the retry count the project's JSON defaults set."
    )
    reads = [
        '{"tool":"read_file","path":"client.py"}',
        '{"tool":"read_file","path":"defaults.json"}',
        FINAL,
        FINAL,
    ]
    model = ViewRecordingModel(reads)
    run_agent(task, model, make_workspace(tmp_path, allow_writes=True))
    first, read_client, read_both = (view for view in model.views[:3] if view is not None)
    tools = frozenset({"read_file", "write_file", "edit_file"})
    change = edit("client.py", "DEFAULT_RETRIES = 2", "DEFAULT_RETRIES = 5")
    assert first.read_first == read_client.read_first == ("defaults.json",)
    assert not expressible(action_schema(tools, (), view=read_client), change)
    assert read_both.read_first == ()
    assert expressible(action_schema(tools, (), view=read_both), change)
