"""A model that replays recorded responses, for demos and tests that need no weights."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the sessions package loads the loop; reading settings must not
    from ..model_state import ModelCheckpoint

from ..context.budget import estimate_tokens
from ..model import McpListings, ModelReply, ResponseStats
from ..workspace_view import WorkspaceView

SCRIPTED_PREFIX = "scripted:"


class ScriptExhausted(RuntimeError):
    """Raised when the run asks for more responses than the script holds."""


class ScriptedModel:
    """Returns the next recorded response on each call, whatever the messages say."""

    def __init__(self, responses: Iterable[str], source: str = "script") -> None:
        self._responses: Sequence[str] = tuple(responses)
        self._next = 0
        self.source = source
        self.stats: list[ResponseStats] = []  # a script has no counters

    def configure_tools(
        self,
        available_tools: frozenset[str],
        allowed_commands: Sequence[Sequence[str]],
        mcp_tools: McpListings | None = None,
        view: WorkspaceView | None = None,
    ) -> None:
        """A script says what it says, whatever the tools."""

    count_tokens = staticmethod(estimate_tokens)  # a script has no tokenizer: the estimate

    @property
    def context_tokens(self) -> int | None:
        return None

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """One raw model response per non-blank line."""
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"could not read scripted responses from {file}: {error}") from None
        responses = [line for line in text.splitlines() if line.strip()]
        if not responses:
            raise ValueError(f"scripted responses file {file} holds no responses")
        return cls(responses, source=str(file))

    @property
    def remaining(self) -> int:
        return len(self._responses) - self._next

    def __call__(self, messages: list[dict[str, str]]) -> str:
        return self.reply(messages).text

    def reply(self, messages: list[dict[str, str]]) -> ModelReply:
        """The next recorded response; a script has no counters."""
        if self._next >= len(self._responses):
            raise ScriptExhausted(
                f"scripted model ran out of responses after {len(self._responses)} "
                f"(from {self.source})"
            )
        response = self._responses[self._next]
        self._next += 1
        return ModelReply(response)

    def save_checkpoint(self, messages: list[dict[str, str]]) -> ModelCheckpoint:
        """Its whole state is the next response's index; it caches no tokens (one empty
        layer)."""
        from ..model_state import ModelCheckpoint

        return ModelCheckpoint(len(messages), self._next, (), (0,))

    def restore_checkpoint(self, checkpoint: ModelCheckpoint) -> None:
        if checkpoint.response_index > len(self._responses):
            raise ValueError(
                f"checkpoint resumes at response {checkpoint.response_index + 1}, but the "
                f"script ({self.source}) holds {len(self._responses)}"
            )
        self._next = checkpoint.response_index
