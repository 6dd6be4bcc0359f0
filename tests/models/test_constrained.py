from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import parse_action
from counterfoil.models import GenerationOptions, load_generate
from counterfoil.models.mlx.constrained import ActionGrammar
from counterfoil.models.mlx.mlx import MLXGenerate
from counterfoil.tools import action_schema
from counterfoil.tools import tool_names as all_tools
from counterfoil.workspace_view import FileRead, WorkspaceView, old_runs

Converse = Callable[..., list[list[dict[str, str]]]]
READ_ONLY = frozenset({"list_files", "read_file"})
WRITES = READ_ONLY | {"write_file", "edit_file"}
COMMANDS = READ_ONLY | {"run_command"}
VALIDATE = ("python", "validate.py")
TESTS = ("python", "-m", "pytest", "-q")


def _branches(schema: dict[str, Any]) -> set[str]:
    names = set()
    for choice in schema["anyOf"]:
        tool = choice["properties"].get("tool")
        names.add(tool["const"] if tool else "final")
    return names


def test_schema_offers_only_enabled_tools_and_final() -> None:
    assert _branches(action_schema(READ_ONLY)) == {"list_files", "read_file", "final"}
    assert _branches(action_schema(None)) == {*all_tools(), "final"}


def test_schema_restricts_argv_to_the_allowlist() -> None:
    schema = action_schema(COMMANDS, [VALIDATE, TESTS])
    command = next(
        c for c in schema["anyOf"] if c["properties"].get("tool") == {"const": "run_command"}
    )
    assert command["properties"]["argv"] == {
        "anyOf": [{"const": list(VALIDATE)}, {"const": list(TESTS)}]
    }


def test_schema_rejects_unknown_tools() -> None:
    with pytest.raises(ValueError, match="unknown tools"):
        action_schema({"read_file", "delete_everything"})


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir: Path) -> Any:
    from mlx_lm.utils import load_tokenizer

    return load_tokenizer(tiny_model_dir)


@pytest.fixture(scope="module")
def vocab_size(tiny_model_dir: Path) -> int:
    return int(json.loads((tiny_model_dir / "config.json").read_text())["vocab_size"])


def _accepts(grammar: ActionGrammar, text: str) -> bool:
    matcher = grammar.processor(64)._matcher
    tokens = grammar.ll_tokenizer.tokenize_str(text)
    return bool(
        matcher.validate_tokens(tokens) == len(tokens)
        and matcher.consume_tokens(tokens)
        and matcher.is_accepting()
    )


def test_grammar_cannot_spell_a_disabled_tool(tokenizer: Any, vocab_size: int) -> None:
    grammar = ActionGrammar(tokenizer, vocab_size, READ_ONLY)
    assert _accepts(grammar, '{"tool":"read_file","path":"app.py"}')
    assert _accepts(grammar, '{"tool":"list_files"}')
    assert _accepts(grammar, '{"final":"done"}')
    assert not _accepts(grammar, '{"tool":"write_file","path":"a","content":"b"}')
    assert not _accepts(grammar, '{"tool":"run_command","argv":["ls"]}')


def test_grammar_spells_a_read_of_the_reserved_artifact_range_path(
    tokenizer: Any, vocab_size: int
) -> None:
    grammar = ActionGrammar(tokenizer, vocab_size, READ_ONLY)
    path = f".tool-artifacts/artifact-{'ab' * 32}/bytes/0-512"
    assert _accepts(grammar, json.dumps({"tool": "read_file", "path": path}, separators=(",", ":")))


def test_grammar_allows_only_allowlisted_argv(tokenizer: Any, vocab_size: int) -> None:
    grammar = ActionGrammar(tokenizer, vocab_size, COMMANDS, [VALIDATE])
    assert _accepts(grammar, '{"tool":"run_command","argv":["python","validate.py"]}')
    assert not _accepts(grammar, '{"tool":"run_command","argv":["python","evil.py"]}')
    assert not _accepts(grammar, '{"tool":"run_command","argv":["python"]}')


def test_grammar_rejects_extra_keys_and_whitespace(tokenizer: Any, vocab_size: int) -> None:
    grammar = ActionGrammar(tokenizer, vocab_size, None)
    assert not _accepts(grammar, '{"tool":"read_file","path":"a","extra":1}')
    assert not _accepts(grammar, '{"tool": "read_file", "path": "a"}')
    assert not _accepts(grammar, '{"final":"a"}{"final":"b"}')


def _decode_with_random_logits(
    tokenizer: Any, grammar: ActionGrammar, max_tokens: int, seed: int, *, thinking: bool = False
) -> tuple[str, int]:
    """Run the processor the way mlx-lm's generate_step does, with random logits."""
    import mlx.core as mx

    processor = grammar.processor(max_tokens, allow_thinking=thinking)
    key = mx.random.key(seed)
    tokens = mx.array([1, 2, 3])
    generated: list[int] = []
    for _ in range(max_tokens):
        key, subkey = mx.random.split(key)
        logits = mx.random.normal((1, grammar.vocab_size), key=subkey) * 4.0
        token = int(mx.argmax(processor(tokens, logits), axis=-1).item())
        generated.append(token)
        tokens = mx.concatenate([tokens, mx.array([token])])
        if token in grammar.eos_token_ids:
            break
    text = tokenizer.decode([token for token in generated if token not in grammar.eos_token_ids])
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    return text, len(generated)


@pytest.mark.parametrize(
    "tools", [None, READ_ONLY, WRITES, COMMANDS], ids=["all", "read", "write", "command"]
)
def test_random_logits_always_yield_a_complete_action_within_budget(
    tokenizer: Any, vocab_size: int, tools: frozenset[str] | None
) -> None:
    grammar = ActionGrammar(tokenizer, vocab_size, tools, [VALIDATE, TESTS])
    for seed, max_tokens in enumerate([40, 48, 56, 64, 80, 96, 120, 200]):
        text, used = _decode_with_random_logits(tokenizer, grammar, max_tokens, seed)
        assert used <= max_tokens
        action = parse_action(text, tools)
        if tools is not None and hasattr(action, "tool"):
            assert action.tool in tools


def test_random_logits_with_thinking_end_in_an_action(tokenizer: Any, vocab_size: int) -> None:
    grammar = ActionGrammar(tokenizer, vocab_size, READ_ONLY)
    think = grammar.think_start_id
    assert think is not None
    for seed in range(4):
        import mlx.core as mx

        processor = grammar.processor(96, allow_thinking=True)
        tokens = mx.array([1, 2, 3])
        logits = mx.zeros((1, vocab_size)).at[0, think].add(10.0)
        first = int(mx.argmax(processor(tokens, logits), axis=-1).item())
        assert first == think, "thinking could not start"
        text, _ = _decode_with_random_logits(tokenizer, grammar, 96, seed, thinking=True)
        parse_action(text, READ_ONLY)


POLICIES = {
    "all tools": (None, [VALIDATE]),
    "writes and commands disabled": (READ_ONLY, []),
    "commands disabled": (WRITES, []),
    "writes disabled": (COMMANDS, [VALIDATE, TESTS]),
}


@pytest.mark.parametrize("policy", list(POLICIES))
def test_every_turn_of_a_tiny_model_conversation_parses(
    tiny_model_spec: str, converse: Converse, policy: str
) -> None:
    tools, commands = POLICIES[policy]
    responses: list[str] = []

    def generate(messages: list[dict[str, str]]) -> str:
        response = generator(messages)
        responses.append(response)
        return response

    generator = load_generate(
        tiny_model_spec,
        GenerationOptions(max_tokens=40, available_tools=tools, allowed_commands=commands),
    )
    assert isinstance(generator, MLXGenerate)
    converse(generate, 20)
    assert len(responses) == 20
    for response in responses:
        action = parse_action(response, tools)
        if hasattr(action, "tool"):
            assert tools is None or action.tool in tools
            if action.tool == "run_command":
                assert tuple(action.arguments["argv"]) in commands


def test_blank_lines_after_thinking_are_allowed_but_bounded(
    tokenizer: Any, vocab_size: int
) -> None:
    import mlx.core as mx

    grammar = ActionGrammar(tokenizer, vocab_size, READ_ONLY)
    newline = tokenizer.encode("\n", add_special_tokens=False)
    assert len(newline) == 1 and grammar.blank_tokens[newline[0]]
    processor = grammar.processor(200, allow_thinking=True)
    tokens = mx.array([1, 2, 3])

    def pick(favoured: int) -> int:
        nonlocal tokens
        logits = mx.zeros((1, vocab_size)).at[0, favoured].add(10.0)
        token = int(mx.argmax(processor(tokens, logits), axis=-1).item())
        tokens = mx.concatenate([tokens, mx.array([token])])
        return token

    assert pick(grammar.think_start_id) == grammar.think_start_id
    assert pick(grammar.think_end_id) == grammar.think_end_id
    assert pick(newline[0]) == newline[0]
    assert pick(newline[0]) == newline[0]
    assert pick(newline[0]) != newline[0], "more blank tokens than allowed"
    assert processor.error is None


def test_run_agent_narrows_a_model_loaded_without_tools_to_the_enabled_ones(
    tiny_model_spec: str, tmp_path: Path
) -> None:
    from counterfoil import AgentLimits, run_agent

    generate = load_generate(tiny_model_spec, GenerationOptions(max_tokens=40))
    assert isinstance(generate, MLXGenerate)
    assert generate.options.available_tools is None
    workspace = make_workspace(tmp_path)
    run = run_agent("look around", generate, workspace, AgentLimits(max_steps=3))
    assert generate.options.available_tools == READ_ONLY
    assert run.events
    for event in run.events:
        parse_action(event.response, READ_ONLY)


READ_TOOL = {
    "server": "files",
    "name": "read",
    "description": "Read a file.",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    },
}


def test_grammar_spells_only_approved_mcp_tools_under_their_schemas(
    tokenizer: Any, vocab_size: int
) -> None:
    grammar = ActionGrammar(tokenizer, vocab_size, {"mcp_call"}, mcp_tools=[READ_TOOL])
    call = '{"tool":"mcp_call","server":"files","name":"read","arguments":{"path":"a"}}'
    assert _accepts(grammar, call)
    assert not _accepts(grammar, call.replace('"read"', '"delete"'))
    assert not _accepts(grammar, call.replace('"path"', '"url"'))


def test_an_mcp_schema_the_compiler_refuses_leaves_the_arguments_any_object(
    tiny_model_spec: str,
) -> None:
    generate = load_generate(tiny_model_spec, GenerationOptions(max_tokens=40))
    assert isinstance(generate, MLXGenerate)
    refused = {**READ_TOOL, "input_schema": {"$ref": "#/definitions/missing"}}

    generate.configure_tools(frozenset({"mcp_call"}), (), mcp_tools=[refused])

    call = '{"tool":"mcp_call","server":"any","name":"thing","arguments":{"x":1}}'
    assert _accepts(generate.grammar, call)


SHOWN_MODULE = "def greet(name):\n    return 'hi ' + name\n\n\ndef main():\n    print(greet('x'))\n"
SHOWN = WorkspaceView(
    files=("app.py", "util.py"),
    existing=("app.py", "util.py"),
    reads=(FileRead("app.py", SHOWN_MODULE),),
)


def _edit(path: str, old: str) -> str:
    action = {"tool": "edit_file", "path": path, "old": old, "new": "x"}
    return json.dumps(action, separators=(",", ":"))


def test_grammar_from_a_view_spells_only_edits_of_lines_read(
    tokenizer: Any, vocab_size: int
) -> None:
    grammar = ActionGrammar(tokenizer, vocab_size, WRITES, view=SHOWN)
    assert _accepts(grammar, _edit("app.py", "def main():\n    print(greet('x'))"))
    assert not _accepts(grammar, _edit("app.py", "app.py"))
    assert not _accepts(grammar, _edit("util.py", "def main():"))
    assert not _accepts(grammar, '{"tool":"read_file","path":"missing.py"}')


def test_grammar_from_a_view_spells_hunks_of_lines_read_whatever_they_hold(
    tokenizer: Any, vocab_size: int
) -> None:
    text = 'PATTERN = r"[a-z]+\\d"  # a^b (c) {d} $e |f\n\nANSWER = 41\n'
    shown = WorkspaceView(files=("re.py",), reads=(FileRead("re.py", text),), existing=("re.py",))
    patches = READ_ONLY | {"write_file", "patch_file"}
    grammar = ActionGrammar(tokenizer, vocab_size, patches, view=shown)

    def patch(diff: str) -> str:
        action = {"tool": "patch_file", "path": "re.py", "diff": diff}
        return json.dumps(action, separators=(",", ":"))

    first = text.split("\n")[0]
    assert _accepts(grammar, patch(f"-{first}\n+PATTERN = 1\n"))
    assert _accepts(grammar, patch(f"@@ -1,3 +1,3 @@\n {first}\n\n-ANSWER = 41\n+ANSWER = 42\n"))
    assert not _accepts(grammar, patch(f"-{first[:-1]}\n+x\n"))  # not the whole line
    assert not _accepts(grammar, patch("-re.py\n+x\n"))
    assert not _accepts(grammar, _edit("re.py", "ANSWER = 41"))  # the other form is not offered


def test_random_logits_under_a_view_edit_only_lines_read(tokenizer: Any, vocab_size: int) -> None:
    grammar = ActionGrammar(tokenizer, vocab_size, WRITES, view=SHOWN)
    runs = old_runs(SHOWN.reads[0])
    assert runs
    for seed in range(8):
        text, _ = _decode_with_random_logits(tokenizer, grammar, 120, seed)
        action = parse_action(text, WRITES)
        arguments = getattr(action, "arguments", {})
        if getattr(action, "tool", None) == "edit_file":
            assert (arguments["path"], arguments["old"] in runs) == ("app.py", True)
        if getattr(action, "tool", None) == "read_file":
            assert arguments["path"] in SHOWN.files
