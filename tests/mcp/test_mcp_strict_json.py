"""MCP arguments are JSON, and what a question shows hides nothing: `NaN` and `Infinity` (which
a server would get as `null`) are refused with one sentence before anyone is asked, and
invisible code points (variation selectors, Hangul fillers, the braille blank, the combining
grapheme joiner, tags, every default-ignorable one) are shown by code point on the terminal and
in every path shown."""

from __future__ import annotations

import io

import pytest

from counterfoil.actions import parse_action
from counterfoil.cli.mcp_approvals import terminal_definition_confirm
from counterfoil.cli.terminal_text import terminal_safe, terminal_safe_stream
from counterfoil.errors import AgentError
from counterfoil.files.path_text import shown_path
from counterfoil.mcp.definitions import ToolDefinition
from counterfoil.mcp.pins import PinCheck
from counterfoil.mcp.servers import McpServer
from counterfoil.mcp.toolbox import DefinitionQuestion

HIDDEN = "a\ufe0fb\u3164c\u2800d\u034fe\U000e0041f\u200bg\u115fh\uffa0i"
SHOWN = "a<U+FE0F>b<U+3164>c<U+2800>d<U+034F>e<U+E0041>f<U+200B>g<U+115F>h<U+FFA0>i"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_number_in_mcp_arguments_is_refused_before_the_question(
    constant: str,
) -> None:
    reply = (
        f'{{"tool":"mcp_call","server":"files","name":"read","arguments":{{"limit":{constant}}}}}'
    )

    with pytest.raises(AgentError) as refused:
        parse_action(reply)

    assert str(refused.value) == (
        f"response is not valid JSON: {constant} is not a JSON number (a server would get "
        "null, not what was shown); write a number or a string"
    )


def test_invisible_code_points_are_shown_on_the_terminal_and_in_paths() -> None:
    assert terminal_safe(HIDDEN + "\n") == SHOWN + "\n"
    assert shown_path(HIDDEN) == SHOWN


def test_a_definitions_invisible_code_points_are_shown_in_its_terminal_question() -> None:
    definition = ToolDefinition(
        "files", "read", f"Read a file.{HIDDEN}", {"type": "object", "title": HIDDEN}
    )
    question = DefinitionQuestion(
        McpServer("files", command=("server",)), definition, PinCheck("new")
    )
    out = io.StringIO()

    terminal_definition_confirm(io.StringIO("n\n"), terminal_safe_stream(out))(question)

    shown = out.getvalue()
    assert "description: 'Read a file.a<U+FE0F>b<U+3164>c<U+2800>d<U+034F>e" in shown
    assert set(shown).isdisjoint(set(HIDDEN) - set("abcdefghi"))
