"""Decoding constrained to one valid action: an mlx-lm logits processor built on llguidance.

The grammar is the core's JSON schema of one action for the *enabled* tools
(`counterfoil.tools.action_schema`), written in the compact form `parse_action` reads, so a
tool the policy disabled cannot even be spelled and, when
commands are allowlisted, `argv` can only be one of the allowed arrays. The mask is computed
on the CPU through llguidance's numpy bitmask path and applied with `mx.where`, so it works the
same on CPU, Metal and CUDA builds.

Two things a plain grammar cannot promise are handled here as well: a response must be
complete within `max_tokens` (near the end of the budget the processor steers to the shortest
closing of the object), and with thinking enabled an optional `<think>…</think>` block may
precede the action.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...model import McpListings
from ...tools import action_schema, tool_names
from ...workspace_view import WorkspaceView

# A single token can lengthen the shortest closing by at most this many tokens (an open
# `\u` escape or a partial UTF-8 character), so forcing starts with this much slack left.
_CLOSING_SLACK = 6
# Blank tokens allowed between </think> and the action, as thinking models write them.
_GAP_TOKENS = 2
# Bytes tried, in order, when no byte is forced: close strings, objects, arrays first.
_CLOSING_PREFERENCE = (
    b'"}],0a'
    + bytes(range(0x80, 0xC0))
    + bytes(byte for byte in range(256) if byte not in b'"}],0a' and not 0x80 <= byte < 0xC0)
)


def action_grammar(
    available_tools: Iterable[str] | None = None,
    allowed_commands: Sequence[Sequence[str]] | None = None,
    mcp_tools: McpListings | None = None,
    view: WorkspaceView | None = None,
) -> str:
    """The llguidance grammar for `action_schema`: compact JSON, no whitespace."""
    from llguidance import LLMatcher

    return str(
        LLMatcher.grammar_from_json_schema(
            action_schema(available_tools, allowed_commands, mcp_tools, view),
            defaults={"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"},
        )
    )


def llguidance_tokenizer(tokenizer: Any, vocab_size: int) -> Any:
    """An llguidance tokenizer for an mlx-lm `TokenizerWrapper`, sized to the model's logits."""
    import llguidance.hf

    hf_tokenizer = getattr(tokenizer, "_tokenizer", tokenizer)
    return llguidance.hf.from_tokenizer(
        hf_tokenizer, n_vocab=vocab_size, eos_token=sorted(tokenizer.eos_token_ids)
    )


class ActionGrammar:
    """One compiled action grammar for one tokenizer; hands out a processor per response."""

    def __init__(
        self,
        tokenizer: Any,
        vocab_size: int,
        available_tools: Iterable[str] | None = None,
        allowed_commands: Sequence[Sequence[str]] | None = None,
        *,
        ll_tokenizer: Any = None,
        mcp_tools: McpListings | None = None,
        view: WorkspaceView | None = None,
    ) -> None:
        from llguidance import LLMatcher

        self.vocab_size = vocab_size
        self.ll_tokenizer = ll_tokenizer or llguidance_tokenizer(tokenizer, vocab_size)
        self.grammar = action_grammar(available_tools, allowed_commands, mcp_tools, view)
        self._matcher = LLMatcher(self.ll_tokenizer, self.grammar, log_level=0)
        if self._matcher.is_error():
            raise ValueError(f"action grammar is invalid: {self._matcher.get_error()}")
        self.eos_token_ids = tuple(sorted(tokenizer.eos_token_ids))
        self.think_start_id = _single_token(tokenizer, "think_start_id")
        self.think_end_id = _single_token(tokenizer, "think_end_id")
        self.byte_tokens: dict[int, int] = {}
        for byte in range(256):
            ids = self.ll_tokenizer.tokenize_bytes(bytes([byte]))
            if len(ids) == 1:
                self.byte_tokens[byte] = ids[0]
        self.closing_window = self._closing_window(available_tools)
        self._blank_tokens: Any = None

    @property
    def blank_tokens(self) -> Any:
        """A boolean array over the vocabulary: tokens made only of spaces and newlines."""
        if self._blank_tokens is None:
            import numpy as np

            blank = np.zeros(self.vocab_size, dtype=np.bool_)
            for token in range(self.vocab_size):
                if token in self.eos_token_ids:
                    continue
                text = self.ll_tokenizer.decode_bytes([token])
                blank[token] = bool(text) and not text.strip(b" \t\r\n")
            self._blank_tokens = blank
        return self._blank_tokens

    def _closing_window(self, available_tools: Iterable[str] | None) -> int:
        """How close to the end of the budget a response must start watching its closing:
        the longest shortest-closing once any branch (tool or final) has been chosen."""
        longest = 0
        tools = tool_names() if available_tools is None else tuple(available_tools)
        openings = [f'{{"tool":"{tool}"' for tool in tools] + ['{"final":"']
        for opening in openings:
            matcher = self._matcher.deep_copy()
            matcher.reset()
            if not matcher.consume_tokens(self.ll_tokenizer.tokenize_str(opening)):
                continue
            plan = closing_plan(self, matcher)
            longest = max(longest, len(plan) if plan is not None else 0)
        return longest + 4 * _CLOSING_SLACK

    def processor(self, max_tokens: int, *, allow_thinking: bool = False) -> ActionConstraint:
        """A fresh logits processor for one response of at most `max_tokens` tokens."""
        matcher = self._matcher.deep_copy()
        matcher.reset()
        thinking = allow_thinking and None not in (self.think_start_id, self.think_end_id)
        return ActionConstraint(self, matcher, max_tokens, allow_thinking=thinking)


def _single_token(tokenizer: Any, attribute: str) -> int | None:
    try:
        value = getattr(tokenizer, attribute, None)
    except ValueError:
        return None
    return value if isinstance(value, int) else None


def closing_plan(grammar: ActionGrammar, matcher: Any) -> list[int] | None:
    """Tokens that complete the action from the matcher's state: forced bytes, else the first
    byte (quote, brace, bracket first) the grammar accepts, until it accepts. None if stuck."""
    matcher = matcher.deep_copy()
    closing = bytearray()
    byte_tokens = grammar.byte_tokens
    for _ in range(4096):
        if matcher.is_accepting():
            break
        forced = matcher.compute_ff_bytes()
        if forced and all(byte in byte_tokens for byte in forced):
            if not matcher.consume_tokens([byte_tokens[byte] for byte in forced]):
                return None
            closing += forced
            continue
        for byte in _CLOSING_PREFERENCE:
            token = byte_tokens.get(byte)
            if token is not None and matcher.validate_tokens([token]) == 1:
                matcher.consume_token(token)
                closing.append(byte)
                break
        else:
            return None
    else:
        return None
    if not closing:
        return []
    return _compact(grammar, bytes(closing), matcher)


def _compact(grammar: ActionGrammar, closing: bytes, finished: Any) -> list[int]:
    """The closing as the tokenizer would write it, when that tokenisation is accepted."""
    per_byte = [grammar.byte_tokens[byte] for byte in closing]
    tokens = list(grammar.ll_tokenizer.tokenize_bytes(closing))
    if len(tokens) >= len(per_byte):
        return per_byte
    probe = finished.deep_copy()
    if not probe.rollback(len(per_byte)):
        return per_byte
    if probe.validate_tokens(tokens) == len(tokens):
        return tokens
    return per_byte


class ActionConstraint:
    """An mlx-lm logits processor: `processor(tokens, logits) -> logits`.

    mlx-lm passes `tokens` = the prompt suffix it was given followed by every token generated
    so far (never the cached prefix), one step ahead of what it yields, and calls once more
    after EOS. The first call therefore fixes the prompt length; later calls feed the new
    tail to the matcher.

    Near the end of the budget every step checks that the action can still be closed: where
    few tokens are allowed (a choice of tool, key or bracket) each is tried and kept only if
    the shortest closing after it still fits; inside free text, where one token lengthens the
    closing by at most a few tokens, the closing is forced once it nearly fills the budget.
    """

    def __init__(
        self, grammar: ActionGrammar, matcher: Any, max_tokens: int, *, allow_thinking: bool
    ) -> None:
        import numpy as np
        from llguidance.numpy import allocate_token_bitmask

        self._grammar = grammar
        self._matcher = matcher
        self._max_tokens = max_tokens
        self._phase = "start" if allow_thinking else "action"
        self._prompt_length: int | None = None
        self._generated = 0
        self._bitmask = allocate_token_bitmask(1, grammar.vocab_size)
        self._np = np
        self._closing: list[int] | None = None
        self._gap = 0
        self.error: str | None = None
        # Thinking may use the budget up to this many tokens before the action must start.
        self._action_reserve = min(max(max_tokens // 2, 1), max(256, grammar.closing_window))

    @property
    def generated(self) -> int:
        return self._generated

    def __call__(self, tokens: Any, logits: Any) -> Any:
        if self._prompt_length is None:
            self._prompt_length = int(tokens.shape[0])
        else:
            start = self._prompt_length + self._generated
            if int(tokens.shape[0]) > start:
                for token in tokens[start:].tolist():
                    self._advance(int(token))
        allowed = self._allowed_tokens()
        if allowed is None:
            return logits
        import mlx.core as mx

        return mx.where(allowed, logits, mx.array(-float("inf"), dtype=logits.dtype))

    def allowed_draft(self, tokens: Sequence[int], draft: Sequence[int]) -> int:
        """How many leading tokens of `draft`, drafted to follow `tokens` (what the next call
        will be given), the grammar accepts; the matcher itself does not move. Outside the
        action, or while a closing is forced, the whole draft is left to the per-position mask.
        """
        if self._phase != "action" or self._closing or self._prompt_length is None:
            return len(draft)
        if self._matcher.is_stopped():
            return 0
        pending = [int(token) for token in tokens[self._prompt_length + self._generated :]]
        valid = int(self._matcher.validate_tokens([*pending, *draft])) - len(pending)
        return max(0, min(len(draft), valid))

    def _advance(self, token: int) -> None:
        self._generated += 1
        if self._phase == "start":
            if token == self._grammar.think_start_id:
                self._phase = "thinking"
                return
            self._phase = "action"
        if self._phase == "thinking":
            if token == self._grammar.think_end_id:
                self._phase = "gap"
            return
        if self._phase == "gap":
            if self._gap < _GAP_TOKENS and self._grammar.blank_tokens[token]:
                self._gap += 1
                return
            self._phase = "action"
        if self._phase != "action":
            return
        if self._matcher.is_stopped():
            self._phase = "done"
            return
        if self._closing:
            if self._closing[0] == token:
                self._closing.pop(0)
            else:
                self._closing = None
        if not self._matcher.consume_token(token):
            self.error = self._matcher.get_error() or f"token {token} rejected"
            self._phase = "done"

    def _allowed_tokens(self) -> Any:
        import mlx.core as mx

        remaining = self._max_tokens - self._generated
        if self._phase == "done":
            return None
        if self._phase == "thinking":
            if remaining <= self._action_reserve:
                return self._only(self._grammar.think_end_id)
            return self._thinking_mask()
        if self._matcher.is_stopped():
            return self._only(*self._grammar.eos_token_ids)
        if self._closing:
            return self._only(self._closing[0])
        from llguidance.numpy import fill_next_token_bitmask

        np = self._np
        fill_next_token_bitmask(self._matcher, self._bitmask)
        bits = np.unpackbits(self._bitmask.view(np.uint8), bitorder="little")
        allowed = bits[: self._grammar.vocab_size].view(np.bool_)
        if remaining <= self._grammar.closing_window:
            narrowed = self._within_budget(allowed, remaining)
            if isinstance(narrowed, int):
                return self._only(narrowed)
            allowed = narrowed
        if self._phase == "start" and remaining > self._action_reserve:
            allowed = allowed.copy()
            allowed[self._grammar.think_start_id] = True
        elif (
            self._phase == "gap"
            and self._gap < _GAP_TOKENS
            and remaining > self._grammar.closing_window
        ):
            allowed = allowed | self._grammar.blank_tokens
        return mx.array(allowed)

    def _within_budget(self, allowed: Any, remaining: int) -> Any:
        """`allowed` narrowed to tokens after which the action still fits in `remaining`
        tokens (this one included), or the single token of a closing that must start now."""
        plan = closing_plan(self._grammar, self._matcher)
        if plan is None:
            return allowed
        candidates = self._np.flatnonzero(allowed)
        if len(candidates) <= 64:
            budget = remaining - 1
            fitting = [int(token) for token in candidates if self._fits_after(int(token), budget)]
            if fitting:
                narrowed = self._np.zeros_like(allowed)
                narrowed[fitting] = True
                return narrowed
        elif len(plan) + _CLOSING_SLACK < remaining:
            return allowed
        if not plan:
            return allowed
        self._closing = plan
        return plan[0]

    def _fits_after(self, token: int, budget: int) -> bool:
        if token in self._grammar.eos_token_ids:
            return bool(self._matcher.is_accepting())
        matcher = self._matcher.deep_copy()
        if not matcher.consume_token(token):
            return False
        plan = closing_plan(self._grammar, matcher)
        return plan is not None and len(plan) <= budget

    def _only(self, *token_ids: int | None) -> Any:
        import mlx.core as mx

        positions = mx.arange(self._grammar.vocab_size)
        allowed = mx.zeros(positions.shape, dtype=mx.bool_)
        for token in token_ids:
            if token is not None:
                allowed = allowed | (positions == token)
        return allowed

    def _thinking_mask(self) -> Any:
        import mlx.core as mx

        blocked = [*self._grammar.eos_token_ids, self._grammar.think_start_id]
        allowed = self._np.ones(self._grammar.vocab_size, dtype=self._np.bool_)
        allowed[[token for token in blocked if token is not None]] = False
        return mx.array(allowed)
