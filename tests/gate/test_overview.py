"""The root's overview: what the first prompt shows of the tree, under the path rules,
folded past a budget, and shown again once a step changes which files the root holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import build_system_prompt, run_agent
from counterfoil.context.prompt import OVERVIEW_HEADING, REFRESHED_HEADING
from counterfoil.gate.overview import lists_every_file, nearby_paths, tree_overview
from counterfoil.step_facts import (
    NotAFolder,
    OverviewFile,
    OverviewFolder,
    PhraseNotFound,
    ReadFirst,
    ReadNow,
    TaskProgress,
)


def files(root: Path, *paths: str) -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x" * len(path))


def test_the_overview_lists_each_file_with_its_size(tmp_path: Path) -> None:
    files(tmp_path, "app.py", "src/util.py")

    overview = make_workspace(tmp_path).overview()

    assert overview.entries == (OverviewFile("app.py", 6), OverviewFile("src/util.py", 11))


def test_the_overview_leaves_out_protected_files_and_the_receipt_log(tmp_path: Path) -> None:
    files(tmp_path, "app.py", ".env", "keys/server.pem", ".git/config")
    workspace = make_workspace(tmp_path, logged=True, allow_writes=True, answer=True)
    workspace.write_file("notes.txt", "n")

    paths = workspace.overview().paths()

    assert paths == {"app.py", "notes.txt"}


def test_a_tree_past_the_budget_folds_its_deepest_folders_first(tmp_path: Path) -> None:
    files(tmp_path, "a.py", "b.py", "pkg/c.py", "pkg/deep/d.py", "pkg/deep/e.py")

    overview = tree_overview(make_workspace(tmp_path).paths, max_lines=4)

    assert overview.entries == (
        OverviewFile("a.py", 4),
        OverviewFile("b.py", 4),
        OverviewFile("pkg/c.py", 8),
        OverviewFolder("pkg/deep", 2, 26),
    )


def test_root_files_past_the_budget_are_counted_not_listed(tmp_path: Path) -> None:
    files(tmp_path, *(f"f{index}.txt" for index in range(6)))

    overview = tree_overview(make_workspace(tmp_path).paths, max_lines=4)

    assert (len(overview.entries), overview.more) == (4, 2)


def test_a_cache_folder_is_shown_but_not_walked(tmp_path: Path) -> None:
    files(tmp_path, "app.py", "node_modules/x/index.js")

    overview = make_workspace(tmp_path).overview()

    assert OverviewFolder("node_modules", None, None) in overview.entries
    assert "node_modules/x/index.js" not in overview.paths()


def test_the_overview_names_every_file_until_a_folder_is_folded(tmp_path: Path) -> None:
    files(tmp_path, "a.py", "pkg/c.py", "pkg/deep/d.py", "__pycache__/a.pyc")
    paths = make_workspace(tmp_path).paths

    assert lists_every_file(tree_overview(paths))  # the cache is shown, not walked
    assert not lists_every_file(tree_overview(paths, max_lines=3))  # pkg folded


def test_the_system_prompt_shows_the_overview(tmp_path: Path) -> None:
    files(tmp_path, "answer.py")

    prompt = build_system_prompt(make_workspace(tmp_path))

    assert f"{OVERVIEW_HEADING}\nanswer.py: 9 bytes" in prompt


def test_a_new_file_shows_the_overview_again_after_the_observation(tmp_path: Path) -> None:
    files(tmp_path, "app.py")
    write = '{"tool":"write_file","path":"notes.md","content":"hi"}'
    model = RecordingModel(write, '{"final":"done"}')

    run = run_agent("add notes", model, make_workspace(tmp_path, allow_writes=True, answer=True))

    step = run.events[0].step_result
    assert step is not None and step.tree is not None
    assert step.tree.paths() == {"app.py", "notes.md"}
    assert model.calls[1][-1]["content"] == (
        f"Tool result:\nwrote notes.md\n\n{REFRESHED_HEADING}\napp.py: 6 bytes\nnotes.md: 2 bytes"
        f"\n\n{TaskProgress('add notes', ('wrote notes.md',)).sentence()}"
    )


def test_an_edit_that_adds_no_file_does_not_repeat_the_overview(tmp_path: Path) -> None:
    files(tmp_path, "app.py")
    read = '{"tool":"read_file","path":"app.py"}'
    edit = '{"tool":"edit_file","path":"app.py","old":"xxxxxx","new":"y = 1"}'
    model = RecordingModel(read, edit, '{"final":"done"}')

    run = run_agent("edit", model, make_workspace(tmp_path, allow_writes=True, answer=True))

    assert run.events[1].result == "edited app.py"
    assert run.events[1].step_result is not None and run.events[1].step_result.tree is None
    assert model.calls[2][-1]["content"] == (
        f"Tool result:\nedited app.py\n\n{TaskProgress('edit', ('edited app.py',)).sentence()}"
    )


def test_after_each_effect_the_model_is_told_the_task_and_what_was_done(tmp_path: Path) -> None:
    """A small model loses the first message over many turns and finishes with a part of the
    task undone (it bumped no version after fixing the test): each effect done repeats both."""
    files(tmp_path, "app.py")
    read = '{"tool":"read_file","path":"app.py"}'
    edit = '{"tool":"edit_file","path":"app.py","old":"xxxxxx","new":"y = 1"}'
    write = '{"tool":"write_file","path":"notes.md","content":"hi"}'
    model = RecordingModel(read, edit, write, '{"final":"done"}')

    run = run_agent("fix and note", model, make_workspace(tmp_path, allow_writes=True, answer=True))

    progress = [event.step_result.progress for event in run.events if event.step_result]
    assert progress == [
        None,
        TaskProgress("fix and note", ("edited app.py",)),
        TaskProgress("fix and note", ("edited app.py", "wrote notes.md")),
    ]
    assert model.calls[3][-1]["content"].endswith(progress[2].sentence())


def test_the_progress_note_names_the_first_part_of_the_task_not_done(tmp_path: Path) -> None:
    """Told "the rest of the task" after fixing greet.py and running the test, the 1.5B wrote
    greet.py again, twice, and never read version.py: the note names the next call when the
    record gives it, after a command too when a file the task names is still untouched."""
    (tmp_path / "greet.py").write_text("x = 1\n")
    (tmp_path / "version.py").write_text('VERSION = "0.1.0"\n')
    read = '{"tool":"read_file","path":"greet.py"}'
    edit = '{"tool":"edit_file","path":"greet.py","old":"x = 1","new":"x = 2"}'
    test = '{"tool":"run_command","argv":["python3","-c","pass"]}'
    model = RecordingModel(read, edit, test, '{"final":"done"}', '{"final":"done"}')
    workspace = make_workspace(
        tmp_path,
        allow_writes=True,
        answer=True,
        allowed_commands=(("python3", "-c", "pass"),),
    )

    run = run_agent("fix greet.py, run the test, bump version.py", model, workspace)

    after_edit, after_test = (run.events[n].step_result for n in (1, 2))
    assert after_edit is not None and after_edit.progress is not None
    assert after_edit.progress.next_step == '{"tool": "read_file", "path": "version.py"}'
    assert after_test is not None and after_test.progress is not None
    assert '- next: {"tool": "read_file", "path": "version.py"};' in (model.calls[3][-1]["content"])


def test_once_the_record_shows_nothing_left_the_note_after_a_command_asks_for_the_final(
    tmp_path: Path,
) -> None:
    """Every part done and the test passed, the 1.5B went on rewriting CHANGELOG.md to the
    step limit: a command that leaves nothing the record names undone is followed by a note
    that says so; one before any file changed names the first part left."""
    (tmp_path / "greet.py").write_text("x = 1\n")
    read = '{"tool":"read_file","path":"greet.py"}'
    edit = '{"tool":"edit_file","path":"greet.py","old":"x = 1","new":"x = 2"}'
    test = '{"tool":"run_command","argv":["python3","-c","pass"]}'
    model = RecordingModel(test, read, edit, test, '{"final":"done"}')
    workspace = make_workspace(
        tmp_path,
        allow_writes=True,
        answer=True,
        allowed_commands=(("python3", "-c", "pass"),),
    )

    run = run_agent("fix greet.py and run the test", model, workspace)

    first_test, _, after_edit, after_test = (run.events[n].step_result for n in range(4))
    assert first_test is not None and first_test.progress is not None
    assert not first_test.progress.settled
    assert first_test.progress.next_step == '{"tool": "read_file", "path": "greet.py"}'
    assert after_edit is not None and after_edit.progress is not None
    assert after_edit.progress.next_step == (
        '{"tool": "run_command", "argv": ["python3", "-c", "pass"]}'
    )
    assert after_test is not None and after_test.progress is not None
    assert after_test.progress.settled
    assert (
        "- next: the record shows no part of the task left; if none is, reply"
        in (model.calls[4][-1]["content"])
    )


def test_a_rejected_edit_is_not_done_and_the_list_keeps_the_latest_effects(tmp_path: Path) -> None:
    files(tmp_path, "app.py")
    read = '{"tool":"read_file","path":"app.py"}'
    edit = '{"tool":"edit_file","path":"app.py","old":"xxxxxx","new":"y = 1"}'
    model = RecordingModel(read, edit, '{"final":"done"}')

    run = run_agent("edit", model, make_workspace(tmp_path, allow_writes=True, answer=False))

    assert run.events[1].step_result is not None and run.events[1].step_result.progress is None
    many = TaskProgress("t", tuple(f"wrote f{n}.md" for n in range(6)))
    assert "- done: 2 earlier; wrote f2.md; wrote f3.md; wrote f4.md; wrote f5.md\n" in (
        many.sentence()
    )


def test_a_change_refused_for_an_unread_short_file_shows_the_file_read_for_the_model(
    tmp_path: Path,
) -> None:
    """The 1.5B wrote version.py unread, read it as told, then had to propose the change again:
    two of its ten steps. A short file is read through the gate with the refusal."""
    files(tmp_path, "app.py")
    write = '{"tool":"write_file","path":"app.py","content":"y = 1"}'
    model = RecordingModel(write, write, '{"final":"done"}')
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)

    run = run_agent("edit", model, workspace)

    first = run.events[0].step_result
    assert first is not None and first.detail == ReadFirst("app.py", "xxxxxx")
    assert run.events[0].result == "error: read the existing file before changing it"
    assert model.calls[1][-1]["content"] == "Tool result:\nerror: " + first.detail.sentence()
    assert first.detail.sentence().endswith(
        "read for you now, and holds:\nxxxxxx\nYour change to app.py is still to make: send it"
        " again, made against this text."
    )
    assert run.events[1].result == "wrote app.py"  # it counts as read: the bytes were shown


def test_a_change_refused_for_an_unread_long_file_is_asked_for_again_once_it_is_read(
    tmp_path: Path,
) -> None:
    """Too long to show with the refusal: the model reads it, and the read says the change is
    still to be made."""
    (tmp_path / "app.py").write_text("x = 1\n" * 500)
    write = '{"tool":"write_file","path":"app.py","content":"y = 1"}'
    read = '{"tool":"read_file","path":"app.py"}'
    model = RecordingModel(write, read, read, '{"final":"done"}')

    run = run_agent("edit", model, make_workspace(tmp_path, allow_writes=True, answer=True))

    steps = [event.step_result for event in run.events[:3]]
    assert steps[0] is not None and steps[0].detail == ReadFirst("app.py")
    assert [step.read_now if step else None for step in steps] == [
        None,
        ReadNow("app.py", "write_file"),
        None,  # said once
    ]
    assert model.calls[2][-1]["content"].endswith(ReadNow("app.py", "write_file").sentence())


def test_a_search_for_a_whole_phrase_that_matches_nothing_names_the_files_not_read_yet(
    tmp_path: Path,
) -> None:
    """The 1.5B searched for the task's own sentence, and then for "one word of it" when told
    to search for one word of it: the files it has not read are named instead."""
    files(tmp_path, "app.py", "notes.md")
    phrase = '{"tool":"search_files","pattern":"stop treating empty values as missing"}'
    word = '{"tool":"search_files","pattern":"nothing"}'
    read = '{"tool":"read_file","path":"app.py"}'
    model = RecordingModel(read, phrase, word, '{"final":"done"}')

    run = run_agent("fix", model, make_workspace(tmp_path, allow_search=True))

    second, third = (event.step_result for event in run.events[1:3])
    assert second is not None
    assert second.phrase == PhraseNotFound("stop treating empty values as missing", ("notes.md",))
    assert third is not None and third.phrase == PhraseNotFound("nothing", ("notes.md",))
    assert model.calls[2][-1]["content"] == (
        "Tool result:\n(no matches)\n\nNote: no line holds that whole phrase (a search matches"
        " text as written on one line). Files you have not read yet: notes.md. Read the ones"
        " the task is about with read_file."
    )
    assert PhraseNotFound("a b c").sentence().endswith("Search for a single word instead.")
    assert model.calls[3][-1]["content"] == (
        "Tool result:\n(no matches)\n\nNote: no line of the project's files matches that"
        " pattern. Files you have not read yet: notes.md. Read the ones the task is about with"
        " read_file."
    )
    assert PhraseNotFound("off-by-one").sentence() == (
        "no line of the project's files matches that pattern. Read the files the task is"
        " about with read_file."
    )


def test_a_search_for_a_file_s_name_or_a_listing_of_a_file_says_it_is_a_file_to_read(
    tmp_path: Path,
) -> None:
    """The 1.5B listed `greet.py` and searched for "greet.py" to find the file the task named,
    and spent two of its ten steps on it."""
    files(tmp_path, "greet.py", "src/version.py")
    model = RecordingModel(
        '{"tool":"list_files","path":"greet.py"}',
        '{"tool":"search_files","pattern":"greet.py"}',
        '{"tool":"search_files","pattern":"version.py"}',
        '{"tool":"search_files","pattern":"greet"}',
        '{"final":"done"}',
    )

    run = run_agent("fix", model, make_workspace(tmp_path, allow_search=True))

    listed, by_path, by_name, word = (event.step_result for event in run.events[:4])
    assert listed is not None and listed.detail == NotAFolder("greet.py")
    assert listed.observation == "error: path is not a directory"  # the course's sentence
    assert model.calls[1][-1]["content"] == (
        "Tool result:\nerror: greet.py is a file, not a folder: read it with read_file"
    )
    assert by_path is not None and by_path.phrase is not None
    assert by_path.phrase.file == "greet.py"
    assert by_name is not None and by_name.phrase is not None
    assert by_name.phrase.file == "src/version.py"
    assert model.calls[2][-1]["content"] == (
        "Tool result:\n(no matches)\n\nNote: no line of the project's files holds that text;"
        " greet.py is a file of the project (its name is not in its text): read it with"
        " read_file."
    )
    assert word is not None and word.phrase is not None and word.phrase.file is None


@pytest.fixture
def root_holding_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A root (the home folder, say) that holds Counterfoil's config folder."""
    config = tmp_path / "config"
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(config))
    files(tmp_path, "app.py", "config/installation-secret", "config/folder-grants.json")
    return tmp_path


def test_the_overview_leaves_out_the_config_folder_the_root_holds(
    root_holding_the_config: Path,
) -> None:
    overview = make_workspace(root_holding_the_config).overview()

    assert overview.paths() == {"app.py"}


def test_nearby_paths_never_name_the_config_folder_the_root_holds(
    root_holding_the_config: Path,
) -> None:
    workspace = make_workspace(root_holding_the_config)

    assert nearby_paths(workspace.paths, "config/installation-secrets") == ("app.py",)
