"""The loop asks the model, parses one action, passes it through the gate, repeats."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import (
    AgentEvent,
    AgentLimits,
    AgentRun,
    FinalAction,
    ToolAction,
    ToolPolicy,
    Workspace,
    build_system_prompt,
    initial_messages,
    run_agent,
)
from counterfoil.model import ModelReply, ResponseStats
from counterfoil.models import ScriptedModel
from counterfoil.steps import StepResult

TASK = "make double() double its argument"
READ_APP = '{"tool":"read_file","path":"app.py"}'
READ_GREETING = '{"tool":"read_file","path":"greeting.py"}'
LIST = '{"tool":"list_files"}'
FINAL = '{"final":"done"}'


def approve(_action: ToolAction) -> bool:
    return True


def read_only(root: Path) -> Workspace:
    return make_workspace(root)


def writable(root: Path) -> Workspace:
    return make_workspace(root, confirm_tool=approve, allow_writes=True)


def turn(response: str, result: str) -> list[dict[str, str]]:
    return [
        {"role": "assistant", "content": response},
        {"role": "user", "content": "Tool result:\n" + result},
    ]


# initial_messages


def test_initial_messages_are_the_system_prompt_then_the_task() -> None:
    assert initial_messages("fix app.py", "You are a coding agent.") == [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "fix app.py"},
    ]


@pytest.mark.parametrize("task", ["", "   ", "\n\t "])
def test_blank_task_is_refused(task: str) -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        initial_messages(task, "system")


def test_run_agent_refuses_a_blank_task(demo_project: Path) -> None:
    model = RecordingModel(FINAL)
    with pytest.raises(ValueError, match="must not be empty"):
        run_agent("  ", model, read_only(demo_project))
    assert model.calls == []


# AgentLimits


def test_agent_limits_defaults() -> None:
    limits = AgentLimits()
    assert (
        limits.max_steps,
        limits.max_context_chars,
        limits.max_invalid_actions,
        limits.max_identical_actions,
    ) == (8, 48_000, 3, 2)


@pytest.mark.parametrize(
    "field", ["max_steps", "max_context_chars", "max_invalid_actions", "max_identical_actions"]
)
@pytest.mark.parametrize("value", [0, -1, True, 1.5, "3", None])
def test_agent_limits_must_be_positive_integers(field: str, value: object) -> None:
    with pytest.raises(ValueError, match="positive"):
        AgentLimits(**{field: value})  # type: ignore[arg-type]


def test_agent_limits_of_one_are_accepted() -> None:
    assert AgentLimits(1, 1, 1, 1) == AgentLimits(
        max_steps=1, max_context_chars=1, max_invalid_actions=1, max_identical_actions=1
    )


# Messages and events


def test_first_call_gets_the_system_prompt_and_the_task(demo_project: Path) -> None:
    workspace = read_only(demo_project)
    model = RecordingModel(FINAL)
    run_agent(TASK, model, workspace)
    assert model.calls == [
        [
            {"role": "system", "content": build_system_prompt(workspace)},
            {"role": "user", "content": TASK},
        ]
    ]


def test_each_tool_turn_appends_the_response_and_its_result(demo_project: Path) -> None:
    app = (demo_project / "app.py").read_text()
    model = RecordingModel(READ_APP, LIST, FINAL)
    workspace = read_only(demo_project)
    run_agent(TASK, model, workspace)
    start = initial_messages(TASK, build_system_prompt(workspace))
    listing = workspace.list_files()
    assert model.calls == [
        start,
        start + turn(READ_APP, app),
        start + turn(READ_APP, app) + turn(LIST, listing),
    ]


def test_parse_errors_are_appended_as_tool_results(demo_project: Path) -> None:
    model = RecordingModel("I think I should read app.py", FINAL)
    workspace = read_only(demo_project)
    run = run_agent(TASK, model, workspace)
    error = run.events[0].result
    assert error is not None and error.startswith("error: ")
    assert model.calls[1][2:] == turn("I think I should read app.py", error)


def test_tool_errors_are_appended_as_tool_results(demo_project: Path) -> None:
    response = '{"tool":"read_file","path":"missing.py"}'
    model = RecordingModel(response, FINAL)
    run = run_agent(TASK, model, read_only(demo_project))
    step = run.events[0].step_result
    assert step is not None and step.detail is not None
    assert model.calls[1][2:] == turn(response, "error: " + step.detail.sentence())
    assert run.events[0].told == "error: " + step.detail.sentence()
    assert run.events[0].result == "error: path is not accessible"


def test_tool_event_holds_step_response_action_and_result(demo_project: Path) -> None:
    run = run_agent(TASK, RecordingModel(READ_APP, FINAL), read_only(demo_project))
    text = (demo_project / "app.py").read_text()
    assert run.events[0] == AgentEvent(
        1,
        READ_APP,
        ToolAction("read_file", {"path": "app.py"}),
        text,
        StepResult(text),
    )


def test_final_event_has_no_result(demo_project: Path) -> None:
    run = run_agent(TASK, RecordingModel(READ_APP, FINAL), read_only(demo_project))
    assert run.events[-1] == AgentEvent(2, FINAL, FinalAction("done"), None)


def test_unparseable_response_event_has_no_action(demo_project: Path) -> None:
    run = run_agent(TASK, RecordingModel("```json\n{}\n```", FINAL), read_only(demo_project))
    event = run.events[0]
    assert event.action is None
    assert event.result is not None and event.result.startswith("error: ")


def test_a_response_cut_off_at_the_reply_limit_is_told_so_not_that_its_json_is_wrong(
    demo_project: Path,
) -> None:
    """The 1.5B's write ran to the reply limit in a loop of repeated lines; told only that its
    JSON was not valid, it quoted that error as its final answer."""
    cut = ResponseStats(1024, "length", 9.0)

    class Cut:
        def __call__(self, messages: list[dict[str, str]]) -> str:
            raise AssertionError("the loop asks for the reply, not the text alone")

        def reply(self, messages: list[dict[str, str]]) -> ModelReply:
            if len(messages) == 2:
                return ModelReply(
                    '{"tool":"write_file","path":"a.py","content":"print(1)\npri', cut
                )
            return ModelReply(FINAL)

    run = run_agent(TASK, Cut(), read_only(demo_project))

    event = run.events[0]
    assert event.action is None and event.result is not None
    assert event.result.startswith(
        "error: response was cut off at the reply limit (1024 tokens) before its JSON ended."
    )


def test_refused_tool_event_has_no_action_and_says_not_enabled(demo_project: Path) -> None:
    response = '{"tool":"write_file","path":"notes.md","content":"x"}'
    run = run_agent(TASK, RecordingModel(response, FINAL), read_only(demo_project))
    event = run.events[0]
    assert event.action is None
    assert event.result is not None and event.result.startswith("error: ")
    assert "not enabled" in event.result
    assert not (demo_project / "notes.md").exists()


def test_gate_is_called_with_one_positional_action(demo_project: Path) -> None:
    seen: list[ToolAction] = []

    class OneArgumentWorkspace(Workspace):
        def execute(self, action):  # type: ignore[no-untyped-def, override]
            seen.append(action)
            return "stubbed"

    workspace = OneArgumentWorkspace(ToolPolicy(demo_project))
    run = run_agent(TASK, RecordingModel(READ_APP, FINAL), workspace)
    assert seen == [ToolAction("read_file", {"path": "app.py"})]
    assert run.events[0].result == "stubbed"


def test_on_event_is_called_once_per_event_in_order(demo_project: Path) -> None:
    seen: list[AgentEvent] = []
    run = run_agent(
        TASK,
        RecordingModel(READ_APP, "nonsense", LIST, FINAL),
        read_only(demo_project),
        on_event=seen.append,
    )
    assert seen == list(run.events)
    assert [event.step for event in seen] == [1, 2, 3, 4]


def test_on_event_sees_the_refusal_of_a_repeated_action(demo_project: Path) -> None:
    seen: list[AgentEvent] = []
    run = run_agent(
        TASK,
        RecordingModel(READ_APP, READ_APP, READ_APP),
        read_only(demo_project),
        on_event=seen.append,
    )
    assert seen == list(run.events)
    assert seen[-1].result == "error: identical action loop detected"


# Every way a run ends


def test_final_answer_completes_the_run(demo_project: Path) -> None:
    run = run_agent(
        TASK, RecordingModel(READ_APP, '{"final":"it doubles now"}'), read_only(demo_project)
    )
    assert isinstance(run, AgentRun)
    assert (run.completed, run.reason, run.final) == (True, "completed", "it doubles now")
    assert len(run.events) == 2


def test_step_limit_ends_the_run(demo_project: Path) -> None:
    model = RecordingModel(READ_APP, LIST, READ_GREETING, FINAL)
    run = run_agent(TASK, model, read_only(demo_project), AgentLimits(max_steps=3))
    assert (run.completed, run.reason, run.final) == (False, "step_limit", None)
    assert len(run.events) == 3
    assert len(model.calls) == 3


def test_context_limit_ends_the_run_before_the_next_model_call(demo_project: Path) -> None:
    workspace = read_only(demo_project)
    start = initial_messages(TASK, build_system_prompt(workspace))
    start_chars = sum(len(message["content"]) for message in start)
    model = RecordingModel(READ_APP, FINAL)
    run = run_agent(TASK, model, workspace, AgentLimits(max_context_chars=start_chars + 20))
    assert (run.completed, run.reason, run.final) == (False, "context_limit", None)
    assert len(model.calls) == 1
    assert len(run.events) == 1


def test_context_limit_counts_the_system_prompt(demo_project: Path) -> None:
    model = RecordingModel(FINAL)
    run = run_agent(
        TASK, model, read_only(demo_project), AgentLimits(max_context_chars=len(TASK) + 10)
    )
    assert run.reason == "context_limit"
    assert model.calls == []


def test_context_within_the_limit_lets_the_run_go_on(demo_project: Path) -> None:
    workspace = read_only(demo_project)
    start = initial_messages(TASK, build_system_prompt(workspace))
    app = (demo_project / "app.py").read_text()
    after_read = start + turn(READ_APP, app)
    limit = sum(len(message["content"]) for message in after_read)
    run = run_agent(
        TASK, RecordingModel(READ_APP, FINAL), workspace, AgentLimits(max_context_chars=limit)
    )
    assert run.reason == "completed"


def test_invalid_action_limit_ends_the_run(demo_project: Path) -> None:
    model = RecordingModel("not json", '{"tool":"delete_file"}', "```{}```", FINAL)
    run = run_agent(TASK, model, read_only(demo_project))
    assert (run.completed, run.reason, run.final) == (False, "invalid_action_limit", None)
    assert len(run.events) == 3
    assert all(event.action is None for event in run.events)
    assert all(event.result.startswith("error: ") for event in run.events)  # type: ignore[union-attr]


def test_invalid_action_limit_of_one_ends_at_the_first_refusal(demo_project: Path) -> None:
    run = run_agent(
        TASK,
        RecordingModel("not json", FINAL),
        read_only(demo_project),
        AgentLimits(max_invalid_actions=1),
    )
    assert run.reason == "invalid_action_limit"
    assert len(run.events) == 1


def test_repeated_action_limit_ends_the_run_without_executing_the_repeat(tmp_path: Path) -> None:
    asked: list[ToolAction] = []

    def confirm(action: ToolAction) -> bool:
        asked.append(action)
        return True

    response = '{"tool":"run_command","argv":["python3","-c","pass"]}'
    policy = ToolPolicy(tmp_path, allowed_commands=(("python3", "-c", "pass"),))
    workspace = make_workspace(policy, confirm_tool=confirm)
    model = RecordingModel(response, response, response, FINAL)
    run = run_agent(TASK, model, workspace)
    assert (run.completed, run.reason, run.final) == (False, "repeated_action_limit", None)
    assert len(asked) == 2
    assert len(run.events) == 3
    assert run.events[-1].action is None
    assert run.events[-1].result == "error: identical action loop detected"


def test_identical_actions_up_to_the_limit_are_allowed(demo_project: Path) -> None:
    run = run_agent(TASK, RecordingModel(READ_APP, READ_APP, FINAL), read_only(demo_project))
    assert run.reason == "completed"


def test_alternating_reads_are_answered_with_what_to_try_instead(demo_project: Path) -> None:
    model = RecordingModel(READ_APP, LIST, READ_APP, FINAL)
    run = run_agent(TASK, model, read_only(demo_project))
    third = run.events[2].step_result
    assert run.reason == "completed"
    assert third is not None and third.loop is not None and third.state == "refused"
    assert third.loop.actions == ({"tool": "read_file", "path": "app.py"}, {"tool": "list_files"})
    assert model.calls[3][-1]["content"] == "Tool result:\nerror: " + third.loop.sentence()


def test_a_round_of_three_actions_with_nothing_new_is_answered_like_an_alternation(
    demo_project: Path,
) -> None:
    """The 1.5B went search, read, read, and round again, to the step limit."""
    model = RecordingModel(LIST, READ_APP, READ_GREETING, LIST, FINAL)
    run = run_agent(TASK, model, read_only(demo_project))
    fourth = run.events[3].step_result
    assert fourth is not None and fourth.loop is not None and fourth.state == "refused"
    assert [action["tool"] for action in fourth.loop.actions] == [
        "list_files",
        "read_file",
        "read_file",
    ]
    assert "were all answered already" in fourth.loop.sentence()


def test_alternating_again_after_the_answer_ends_the_run(demo_project: Path) -> None:
    model = RecordingModel(READ_APP, LIST, READ_APP, LIST, FINAL)
    run = run_agent(TASK, model, read_only(demo_project), AgentLimits(max_steps=8))
    assert (run.reason, len(run.events)) == ("repeated_action_limit", 4)


def test_alternation_around_a_change_is_not_a_loop(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    write = '{"tool":"write_file","path":"app.py","content":"x = 2\\n"}'
    model = RecordingModel(READ_APP, write, READ_APP, FINAL)
    run = run_agent(TASK, model, writable(tmp_path))
    assert run.reason == "completed"
    assert [event.step_result.loop for event in run.events[:3] if event.step_result] == [None] * 3


def test_a_refused_change_then_the_read_it_asked_for_is_not_a_loop(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    edit = '{"tool":"edit_file","path":"app.py","old":"x = 1","new":"x = 2"}'
    run = run_agent(TASK, RecordingModel(edit, READ_APP, edit, FINAL), writable(tmp_path))
    assert run.events[2].result == "edited app.py"


def test_reading_again_after_an_edit_that_missed_is_not_a_loop(tmp_path: Path) -> None:
    """The missed edit's answer says to read the file again; doing so once is no alternation
    (the 1.5B lost its last steps to this refusal), but a second missed edit after it is."""
    (tmp_path / "app.py").write_text('x = "1"\n')
    miss = '{"tool":"edit_file","path":"app.py","old":"x = \'1\'","new":"x = 2"}'
    run = run_agent(TASK, RecordingModel(READ_APP, miss, READ_APP, miss, FINAL), writable(tmp_path))
    loops = [event.step_result.loop for event in run.events[:4] if event.step_result]
    assert loops[:3] == [None, None, None]
    assert run.events[2].result == 'x = "1"\n'
    assert loops[3] is not None  # edit, read, the same edit: nothing new to see


def test_an_identical_repeat_with_the_same_result_is_told_so(demo_project: Path) -> None:
    model = RecordingModel(READ_APP, READ_APP, FINAL)
    run = run_agent(TASK, model, read_only(demo_project))
    second = run.events[1].step_result
    text = (demo_project / "app.py").read_text()
    assert second is not None and second.loop is not None
    assert run.events[1].result == text
    assert model.calls[2][-1]["content"] == (
        f"Tool result:\n{text}\n\nNote: {second.loop.sentence()}"
    )


def test_repeat_limit_follows_max_identical_actions(demo_project: Path) -> None:
    run = run_agent(
        TASK,
        RecordingModel(READ_APP, READ_APP, FINAL),
        read_only(demo_project),
        AgentLimits(max_identical_actions=1),
    )
    assert run.reason == "repeated_action_limit"
    assert len(run.events) == 2


def test_should_stop_cancels_before_the_next_model_call(demo_project: Path) -> None:
    model = RecordingModel(READ_APP, LIST, FINAL)
    run = run_agent(TASK, model, read_only(demo_project), should_stop=lambda: len(model.calls) >= 1)
    assert (run.completed, run.reason, run.final) == (False, "cancelled", None)
    assert len(model.calls) == 1
    assert len(run.events) == 1


def test_should_stop_at_once_calls_no_model(demo_project: Path) -> None:
    model = RecordingModel(FINAL)
    run = run_agent(TASK, model, read_only(demo_project), should_stop=lambda: True)
    assert run.reason == "cancelled"
    assert model.calls == []
    assert tuple(run.events) == ()


def test_model_out_of_responses_ends_with_model_error(demo_project: Path) -> None:
    run = run_agent(TASK, ScriptedModel([READ_APP]), read_only(demo_project))
    assert (run.completed, run.reason, run.final) == (False, "model_error", None)
    assert run.error is not None and "ran out of responses" in run.error
    assert len(run.events) == 1


def test_model_exception_message_is_kept(demo_project: Path) -> None:
    def broken(_messages: list[dict[str, str]]) -> str:
        raise RuntimeError("the model server went away")

    run = run_agent(TASK, broken, read_only(demo_project))
    assert run.reason == "model_error"
    assert run.error is not None and "the model server went away" in run.error
    assert tuple(run.events) == ()


def test_completed_run_has_no_error(demo_project: Path) -> None:
    assert run_agent(TASK, RecordingModel(FINAL), read_only(demo_project)).error is None


# What the run reports


def test_modified_files_come_from_the_workspace(demo_project: Path) -> None:
    responses = [
        READ_APP,
        '{"tool":"edit_file","path":"app.py","old":"value * 1","new":"value * 2"}',
        '{"tool":"write_file","path":"NOTES.md","content":"doubled\\n"}',
        FINAL,
    ]
    workspace = writable(demo_project)
    run = run_agent(TASK, ScriptedModel(responses), workspace)
    assert run.reason == "completed"
    assert run.modified_files == ("NOTES.md", "app.py") == workspace.modified_files


@pytest.mark.parametrize(
    ("responses", "limits"),
    [
        (["nonsense"] * 3, None),
        ([READ_APP, READ_APP, READ_APP], None),
        ([READ_APP, LIST], AgentLimits(max_steps=2)),
        ([], None),
    ],
    ids=["invalid_action_limit", "repeated_action_limit", "step_limit", "model_error"],
)
def test_modified_files_are_reported_on_every_ending(
    demo_project: Path, responses: list[str], limits: AgentLimits | None
) -> None:
    workspace = writable(demo_project)
    workspace.write_file("NOTES.md", "before the run\n")
    run = run_agent(TASK, ScriptedModel(responses), workspace, limits)
    assert run.reason != "completed"
    assert run.modified_files == ("NOTES.md",)


def test_read_only_run_modifies_nothing(demo_project: Path) -> None:
    run = run_agent(TASK, RecordingModel(READ_APP, FINAL), read_only(demo_project))
    assert run.modified_files == ()


def test_generate_gets_a_list_of_role_content_messages(demo_project: Path) -> None:
    checked: list[bool] = []

    def generate(messages: list[dict[str, str]]) -> str:
        checked.append(
            isinstance(messages, list)
            and all(set(message) == {"role", "content"} for message in messages)
        )
        return FINAL if len(checked) > 1 else READ_APP

    run_agent(TASK, generate, read_only(demo_project))
    assert checked == [True, True]


class ToolAwareModel(ScriptedModel):
    """A scripted model that records what `run_agent` tells it about the enabled tools."""

    def __init__(self, responses: list[str]) -> None:
        super().__init__(responses)
        self.configured: list[tuple[frozenset[str], object]] = []

    def configure_tools(
        self,
        available_tools: frozenset[str],
        allowed_commands: object,
        mcp_tools: object = None,
        view: object = None,
    ) -> None:
        self.configured.append((available_tools, allowed_commands))


def test_run_agent_tells_a_tool_aware_model_the_enabled_tools_each_step(tmp_path: Path) -> None:
    commands = (("python", "validate.py"),)
    workspace = make_workspace(tmp_path, allowed_commands=commands)
    model = ToolAwareModel([LIST, FINAL])
    run = run_agent(TASK, model, workspace)
    assert run.completed
    tools = frozenset({"list_files", "read_file", "run_command"})
    assert model.configured == [(tools, commands), (tools, commands)]


def test_a_model_that_cannot_take_the_tools_ends_the_run_with_model_error(tmp_path: Path) -> None:
    class Refusing(ToolAwareModel):
        def configure_tools(
            self,
            available_tools: frozenset[str],
            allowed_commands: object,
            mcp_tools: object = None,
            view: object = None,
        ) -> None:
            raise ValueError("grammar is invalid")

    run = run_agent(TASK, Refusing([FINAL]), make_workspace(tmp_path))
    assert (run.completed, run.reason, run.error) == (
        False,
        "model_error",
        "ValueError: grammar is invalid",
    )


def test_a_file_a_change_leaves_unparseable_is_told_after_its_observation(tmp_path: Path) -> None:
    """A file that did not parse before may be changed (a change that breaks a file that
    parsed is refused before it is asked): what the written file lacks is told after."""
    (tmp_path / "config.json").write_text("{\n")
    read = '{"tool":"read_file","path":"config.json"}'
    write = '{"tool":"write_file","path":"config.json","content":"{\\"a\\": }"}'
    model = RecordingModel(read, write, FINAL)
    run = run_agent(TASK, model, writable(tmp_path))
    step = run.events[1].step_result
    assert step is not None and step.syntax is not None
    assert model.calls[2][-1]["content"].startswith("Tool result:\nwrote config.json")
    assert "\n\nNote: " + step.syntax.sentence() in model.calls[2][-1]["content"]


def test_the_loop_reads_each_responses_figures_from_the_models_reply(demo_project: Path) -> None:
    cost = ResponseStats(5, "stop", 0.5, prompt_tokens=40)

    class Replying:
        def __call__(self, messages: list[dict[str, str]]) -> str:
            raise AssertionError("the loop asks for the reply, not the text alone")

        def reply(self, messages: list[dict[str, str]]) -> ModelReply:
            return ModelReply(READ_APP if len(messages) == 2 else FINAL, cost, "40 cached")

    run = run_agent(TASK, Replying(), read_only(demo_project))

    assert [(event.response_stats, event.model_note) for event in run.events] == [
        (cost, "40 cached"),
        (cost, "40 cached"),
    ]
    assert run.responses == (cost, cost)


def test_a_plain_generate_callables_steps_say_no_figures(demo_project: Path) -> None:
    run = run_agent(TASK, lambda messages: FINAL, read_only(demo_project))

    assert (run.events[0].response_stats, run.events[0].model_note) == (None, None)
    assert run.responses == ()


def test_a_write_that_changed_only_the_layout_is_told_to_the_model(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{\n  "strict": false\n}\n')
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    read = '{"tool":"read_file","path":"config.json"}'
    write = '{"tool":"write_file","path":"config.json","content":"{\\"strict\\":false}"}'
    model = RecordingModel(read, write, FINAL)

    run_agent("enable strict parsing in config.json", model, workspace)

    told = model.calls[2][-1]["content"]
    assert told.startswith("Tool result:\nwrote config.json\n\nNote: config.json holds the same")


def test_going_round_while_the_file_the_task_refers_to_is_unread_is_told_to_read_it(
    tmp_path: Path,
) -> None:
    """The grammar offers no change until the task's "JSON defaults" are read; the 1.5B went
    round a search and a read and was told to change the file instead, which it could not."""
    (tmp_path / "client.py").write_text("DEFAULT_RETRIES = 2\n")
    (tmp_path / "defaults.json").write_text('{"retries": 5}\n')
    task = (
        "DEFAULT_RETRIES in client.py must equal the retry count the project's JSON defaults set."
    )
    search = '{"tool":"search_files","pattern":"DEFAULT_RETRIES"}'
    read = '{"tool":"read_file","path":"client.py"}'
    workspace = make_workspace(tmp_path, allow_writes=True, allow_search=True)
    run = run_agent(task, RecordingModel(search, read, search, FINAL, FINAL), workspace)
    third = run.events[2].step_result
    assert third is not None and third.loop is not None
    assert third.loop.read_next == "defaults.json"
    assert third.loop.sentence().endswith(
        'instead read the file the task refers to: {"tool": "read_file", "path": '
        '"defaults.json"}, or reply with your final answer.'
    )
