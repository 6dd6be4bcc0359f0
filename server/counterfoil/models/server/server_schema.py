"""The request fields that ask a model server to enforce the action schema, per schema mode."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...model import McpListings
from ...tools import action_schema
from ...workspace_view import WorkspaceView
from ..errors import ModelLoadError
from .endpoint import SCHEMA_MODES

SCHEMA_NAME = "counterfoil_action"


def server_action_schema(
    available_tools: Iterable[str] | None,
    allowed_commands: Sequence[Sequence[str]],
    mcp_tools: McpListings | None = None,
    view: WorkspaceView | None = None,
) -> dict[str, Any]:
    """The action schema the server is asked to enforce: the one the local decoder uses, less
    the patterns over text that holds newlines or quotes (a patch's hunk): llama.cpp's server
    reads a string's pattern over the JSON text as written, not as it decodes (a pattern's
    newline became a raw newline in the string, and a hunk's `"` ended it), and what another
    server does is not known. Such a string is any string; the gate refuses a hunk that misses."""
    return action_schema(available_tools, allowed_commands, mcp_tools, view, text_patterns=False)


def schema_request(mode: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The request fields that ask a server to enforce `schema`, in the form `mode` names."""
    if mode == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": schema, "strict": True},
            }
        }
    if mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mode == "structured_outputs":
        return {"structured_outputs": {"json": schema}}
    if mode == "none":
        return {}
    raise ModelLoadError(f"unknown schema mode {mode!r}: use one of {', '.join(SCHEMA_MODES)}")
